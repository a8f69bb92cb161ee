/**
 * The Erda server's own path: {@link ErdaServerMain} (command line), {@link RequestServer} (fabric, connections, worker
 * threads), {@link Connection} (receive slots, replies, HEAD_STATE credits), {@link ErdaProtocolHandler} (HELLO, PUT,
 * GET, FLUSH, HEADS, REPAIR_HINT, STATS, CLEAN). The store it serves is {@link io.erda.server.store}; huge pages and
 * power-failure emulation are the machine's side: {@link io.erda.server.platform}.
 *
 * <p>The two baselines live in {@link io.erda.server.baseline}, the offline commands in
 * {@link io.erda.server.offline}; the request server hosts the baselines through
 * {@link io.erda.server.baseline.Baselines} and never builds one itself. What a client can rely on, the wire contract
 * this server implements, is the package Javadoc of {@code io.erda.protocol}.
 *
 * <p>May depend on erda-core, erda-protocol, erda-fabric (the SPI only: {@code io.erda.fabric}), erda-cleaner,
 * picocli and {@code io.erda.server.baseline} / {@code io.erda.server.offline} / {@code io.erda.server.platform} /
 * {@code io.erda.server.store}; never on a fabric provider's package or on client code.
 */
package io.erda.server;
