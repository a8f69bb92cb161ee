/**
 * The client of an Erda server: Erda itself, whose GETs are one-sided READs and whose PUTs are a two-sided
 * reservation plus one WRITE (paper §3.3), and the two baselines of paper §5.1, all behind one interface.
 *
 * <h2>Public API</h2>
 * {@link io.erda.client.KeyValueClient} (GET, PUT, DELETE on bytes or {@code MemorySegment}s), implemented by
 * {@link io.erda.client.ErdaClient}, {@link io.erda.client.RedoLogClient} and
 * {@link io.erda.client.ReadAfterWriteClient} on top of {@link io.erda.client.PooledClient} (connection pool,
 * threading, reconnect on fabric errors); {@link io.erda.client.ClientOptions}, {@link io.erda.client.ClientStats},
 * {@link io.erda.client.ErdaException}.
 *
 * <h2>Inside</h2>
 * <ul>
 *   <li>{@code ClientConnection}: one endpoint with its registered buffers, used by one thread at a time; request/reply
 *       ({@code call}), the two-sided GET, and the head array's upkeep: HEAD_STATEs ({@code catchUp}) and HEADS
 *       ({@code refreshHeads}) update its {@code StoreView}, what HELLO described (geometry, addresses, heads).</li>
 *   <li>{@code ErdaGet} and {@code ErdaPut}: Erda's request paths (docs/ARCHITECTURE.md, "Request paths"). Both read
 *       entries through {@code RemoteTable} (window, stripe versions, current-and-unchanged); {@code ErdaGet} reads
 *       objects through {@code ObjectReader}, which returns the check and the value. Neither calls the other.</li>
 * </ul>
 * Calls go one way: client → {@code ErdaGet}/{@code ErdaPut} → {@code RemoteTable}/{@code ObjectReader} →
 * {@code ClientConnection} → {@code StoreView}.
 *
 * <h2>Dependencies</h2>
 * erda-protocol (the wire format, and in {@code io.erda.protocol.memory} the remote-memory format: key hashing,
 * object and entry layouts, table and log geometry) and erda-fabric (endpoints, registered memory). Never erda-core
 * or erda-server, the server's storage engine and process: what a client may rely on is the contract in
 * {@code io.erda.protocol}; tests start real server processes (test scope). picocli is for {@code io.erda.client.cli}
 * only.
 */
package io.erda.client;
