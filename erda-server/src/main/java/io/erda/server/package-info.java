/**
 * The Erda server: {@link io.erda.server.ErdaServerMain} (command line), {@link io.erda.server.RequestServer}
 * (fabric, connections, worker threads), {@link io.erda.server.Store} (table and logs, leases, rollback),
 * {@code Recovery} (restart), {@code StoreVerifier} and {@code TableRebuilder} (offline commands); the baselines of
 * paper §5.1: {@code RedoLog} and {@code ReadAfterWriteRing} with their protocol handlers.
 *
 * <p>What a client can rely on, the wire contract this server implements, is the package Javadoc of
 * {@code io.erda.protocol}.
 */
package io.erda.server;
