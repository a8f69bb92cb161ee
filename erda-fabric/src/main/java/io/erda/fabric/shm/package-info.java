/**
 * The {@code shm:///dir} provider, for peers on one host. One-sided operations are the initiator's own accesses to the
 * target's file-backed regions mapped into its process ({@code PeerMemory}: copies, {@code VarHandle} atomics, FLUSH as
 * msync), with no thread of the target involved. SEND and WRITE_WITH_IMM are records in single-producer rings in a
 * shared file ({@code Ring}, {@code RingFile}, {@code RingRecord}), placed into a posted receive by the peer's
 * {@code Poller} (or by a thread waiting on one of its completion queues, while the poller stands by) and acknowledged. {@link ShmFabricProvider}
 * opens a {@link ShmFabric}; {@link ShmMemoryRegion}, {@code ShmEndpoint}, {@code ShmListener}, {@code Handshake}
 * (over {@code dir/erda.sock}, which then stays open as the liveness channel), {@code ExportsFile} and
 * {@code CountersFile} (what a target exports, and what initiators counted into it) complete it. {@code ShmHome} gives
 * each instance a locked home that close, a shutdown hook or (after a crash) the next shm process deletes;
 * {@code ShmFiles} makes everything {@code 0600} (or {@code 0660} for a group), since file modes are what keeps other
 * users out of a cooperative fabric.
 *
 * <p>Rules: a region with remote access needs a {@code Backing} file, else its registration fails. Every one-sided
 * access is checked on the initiator against the descriptors the target exported ({@code RegionTable}: rkey, range,
 * access flag) after re-reading the export generation, so an access after a deregistration fails with
 * REMOTE_ACCESS_ERROR ([bad-input]); the check is cooperative: shm guards against bugs, not against a hostile process
 * on the same host. What a peer wrote is checked before it is used: the ring file ({@code RingFile.verify}) and each
 * ring record ({@code Ring.headFrame}; a bad one is a {@code RingViolation} that fails the endpoint). A ring record is
 * published Aeron-style (its length release-stored last) and zeroed once consumed;
 * a one-sided request never overtakes an unacknowledged message; the lost-wakeup protocol of {@code Ring} (announce,
 * full fence, look once more) must stay intact.
 *
 * <p>May depend on {@code io.erda.fabric} (the SPI) and {@code io.erda.fabric.emulated}; never on another provider's
 * package or on the bindings.
 */
package io.erda.fabric.shm;
