/**
 * What the providers that carry out RDMA in software, tcp and shm, share: {@link RegionTable} (the rkey table, and the check every one-sided access passes
 * before memory is touched: known rkey, range inside the region, access flag, atomics 8-byte aligned; run by the tcp
 * responder on the target and by the shm initiator against the descriptors the target exported),
 * {@link EmulatedCompletionQueue} (a lock-free completion queue whose waiters spin, yield, then park, optionally driving
 * the provider themselves through its {@link InlineProgress}, which also learns when they come and go).
 *
 * <p>Rules: a failed check returns a status and a detail naming the rkey, the range or the flag, and the caller then
 * touches no memory ([bad-input]); keys are never reused within a table, so a stale rkey cannot reach a new region.
 * Public only because several provider packages use it: it is not part of the SPI, and nothing outside erda-fabric
 * imports it.
 *
 * <p>Depends on {@code io.erda.fabric} (the SPI) and the JDK only; never on a provider package. The tcp and shm
 * providers depend on it.
 */
package io.erda.fabric.emulated;
