/**
 * The fault campaign ({@code scripts/fault-campaign}): {@link io.erda.bench.faults.FaultCampaign} drives real server
 * processes and several {@link io.erda.bench.faults.CampaignClient} processes through a seeded random schedule of
 * crashes, power failures, client kills, write faults, broken connections and cleanings; every process writes a
 * {@link io.erda.bench.faults.History} and {@link io.erda.bench.faults.HistoryChecker} explains every read by a write
 * ({@link io.erda.bench.faults.CampaignValue} makes each value prove which PUT wrote it).
 *
 * <p>Depends on erda-client, erda-server (its main, and the offline {@code StoreVerifier}), erda-fabric's
 * {@code FaultInjectingEndpoint}, {@code io.erda.bench.backend}'s {@code ServerProcess}, picocli and the JDK.
 */
package io.erda.bench.faults;
