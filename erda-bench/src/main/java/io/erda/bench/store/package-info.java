/**
 * Store benchmarks against a server in this JVM ({@code RequestServer}) or, for {@link ScaleBench}, in a process of
 * its own: {@link StoreBench} (scripts/store-bench:
 * single-thread PUT and GET latency and rate per fabric and value size; NVM bytes per create, update and delete and
 * server and NIC-engine CPU per GET from STATS deltas; with {@code --latency-check}, {@code LatencyCheck}: GET and PUT
 * means in YCSB's mixes next to the fabric's READ and SEND/RECV round trips, as ratios in one run) and {@link NvmTable} (scripts/nvm-table: the paper's Table 1 by
 * measurement, NVM bytes per create, update and delete for all three protocols on shm, next to what the layouts should
 * write and the paper's formula) and {@link ScaleBench} (scripts/scale-bench: a load of millions of keys against an
 * {@code erda-server} process, its slowest inserts lined up with the server JVM's safepoints and allocation stalls
 * ({@code Pauses}, from its -Xlog) and this JVM's own, logged the same way, then GET mean, with the server's {@code --huge-pages}
 * modes side by side).
 *
 * <p>Depends on erda-server ({@code RequestServer}, {@code ServerConfig}), erda-client, erda-protocol
 * ({@code PersistenceMethod}), {@code io.erda.bench.backend} ({@code StatsText}, {@code ScratchDirectory},
 * {@code ServerProcess}, {@code ServerSettings}),
 * {@code io.erda.bench.fabric} ({@code FabricPair}), HdrHistogram, picocli and the JDK
 * ({@code java.management}: the diagnostic command that makes this JVM log its pauses).
 */
package io.erda.bench.store;
