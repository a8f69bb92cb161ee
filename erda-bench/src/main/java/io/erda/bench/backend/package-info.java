/**
 * How the benchmarks start and reach a store without knowing which: the {@link StoreBackend} SPI, found by protocol
 * name with {@code ServiceLoader} ({@link StoreBackends}; {@code META-INF/services}), with its {@link StoreServer}
 * (URI, STATS counters) and {@link StoreClient} (get, put, delete); {@link ServerSettings} says how to start a server,
 * {@link ServerProcess} starts one as a JVM of its own and returns once it prints "listening on" (or any other
 * server executable, once it prints its ready line), {@link StatsText} parses STATS, {@link ScratchDirectory} deletes
 * the benchmarks' throw-away directories. {@link ErdaBackend} serves {@code erda}, {@code redo-log} and
 * {@code read-after-write}: on shm a server in this JVM unless a process is asked for, else a process; Redis has its
 * own package ({@code io.erda.bench.redis}).
 *
 * <p>Rules: {@link ErdaBackend} is the only class here that imports erda-client, erda-server and erda-protocol; the
 * rest stays store-agnostic, so tests register stand-in backends on their own class path. A backend's {@code start}
 * must fail, never hang, within {@link ServerSettings#startTimeout()}.
 *
 * <p>Depends on erda-client, erda-server and erda-protocol (in {@link ErdaBackend} only) and the JDK.
 */
package io.erda.bench.backend;
