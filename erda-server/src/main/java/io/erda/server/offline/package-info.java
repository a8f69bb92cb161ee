/**
 * The offline commands of {@code erda-server}, run on a stopped store's PM directory:
 * {@link io.erda.server.offline.StoreVerifier} ({@code verify}: every entry's current object must be complete; torn
 * areas in the logs are counted) and {@link io.erda.server.offline.TableRebuilder} ({@code rebuild}: the table
 * recreated from the logs' newest complete objects). Neither opens a fabric or takes a lease.
 *
 * <p>May depend on erda-core and erda-protocol's remote-memory format ({@code io.erda.protocol.memory}) only (and the
 * JDK); never on the running server's classes.
 */
package io.erda.server.offline;
