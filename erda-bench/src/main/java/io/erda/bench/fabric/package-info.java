/**
 * {@link FabricBench} (scripts/fabric-bench): the fabric providers side by side, target and initiator as two fabric
 * instances in this process connected over the provider's real transport: 64 B READ, WRITE and WRITE then READ, 4 KiB
 * READ, a SEND/RECV ping-pong, and 64 B READ from 2 and 4 threads; latency with HdrHistogram, and the target's engine
 * CPU per operation. {@link FabricPair} is its fixture, also used by store-bench's latency check.
 *
 * <p>Depends on the {@code io.erda.fabric} SPI only (providers are found by scheme on the class path), HdrHistogram,
 * picocli and the JDK: no provider package, no store, no protocol.
 */
package io.erda.bench.fabric;
