/**
 * The fault campaign ({@code scripts/fault-campaign}): {@link io.erda.bench.faults.FaultCampaign} drives real server
 * processes and several {@link io.erda.bench.faults.CampaignClient} processes through a seeded random schedule of
 * crashes, power failures, client kills, write faults, broken connections and cleanings; every process records its
 * operations in a history file (erda-history's {@code HistoryRecorder}), and
 * {@link io.erda.bench.faults.CampaignVerdict} checks the whole history for linearizability, a register per key
 * ({@link io.erda.bench.faults.CampaignValue} makes each value prove which PUT wrote it).
 *
 * <p>Depends on erda-client, erda-server (its main, and the offline {@code StoreVerifier}), erda-fabric's
 * {@code FaultInjectingEndpoint}, erda-history, {@code io.erda.bench.backend}'s {@code ServerProcess}, picocli and
 * the JDK.
 */
package io.erda.bench.faults;
