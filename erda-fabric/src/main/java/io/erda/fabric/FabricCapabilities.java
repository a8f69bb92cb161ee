package io.erda.fabric;

/**
 * What one opened fabric can do, where devices differ: read from the device when the fabric opens (verbs:
 * {@code ibv_query_device(_ex)}), fixed by the provider otherwise. Callers size their queues from the limits and
 * check a capability before relying on it; a request the device cannot execute is refused at post time with a
 * {@link FabricException} that names the device and the missing capability ({@link #missing}).
 *
 * @param device                    what the fabric runs on, for messages: the provider, and for verbs the device name,
 *                                  its firmware, the rdma-core release and the kernel
 * @param maxCompletionQueueEntries the largest completion queue {@link Fabric#createCompletionQueue} accepts
 *                                  (verbs: {@code max_cqe})
 * @param maxWorkRequests           the deepest send or receive queue an endpoint may have (verbs: {@code max_qp_wr})
 * @param atomicWrite               {@link Opcode#ATOMIC_WRITE} is executed (verbs: rdma-core 44 and a device whose
 *                                  {@code device_cap_flags_ex} has ATOMIC_WRITE, Linux 6.2 and later)
 * @param atomicity                 what remote CAS and FETCH_ADD are atomic against
 * @param nativeFlush               {@link Opcode#FLUSH} is the device's own flush to persistence; otherwise it is
 *                                  emulated (verbs: a READ of the range's first bytes, which cannot complete before
 *                                  the earlier WRITEs are placed)
 * @param writeLatencyModel         {@link RegisterOptions#withWriteDelay} is applied (the software providers write
 *                                  target memory themselves; a real RNIC does not, and the option is ignored)
 * @param remoteWritesCounted       {@link MemoryRegion#remoteBytesWritten} counts what peers wrote one-sided (the
 *                                  software providers place those bytes themselves; an RNIC places them unseen, and
 *                                  a target that needs the figure must derive it, e.g. from what it handed out)
 */
public record FabricCapabilities(String device, int maxCompletionQueueEntries, int maxWorkRequests, boolean atomicWrite,
                                 Atomicity atomicity, boolean nativeFlush, boolean writeLatencyModel,
                                 boolean remoteWritesCounted) {

    /** What a remote atomic (CAS, FETCH_ADD) is atomic against (verbs' {@code atomic_cap}). */
    public enum Atomicity {
        /**
         * {@code IBV_ATOMIC_GLOB}: also against the target host's CPU atomics on the same memory, so the target may
         * update a word with its own CAS while initiators do remote CAS on it.
         */
        GLOBAL,
        /**
         * {@code IBV_ATOMIC_HCA}: only against other remote atomics executed by the same device; a concurrent CPU
         * atomic on the target can be lost (the RNIC reads, modifies and writes the word outside the CPU's cache
         * protocol), so a word must be updated either only remotely or only locally.
         */
        DEVICE,
        /** {@code IBV_ATOMIC_NONE}: the device executes no remote atomics; CAS and FETCH_ADD are refused. */
        NONE
    }

    public FabricCapabilities {
        if (maxCompletionQueueEntries <= 0 || maxWorkRequests <= 0) {
            throw new IllegalArgumentException("limits must be positive: max completion queue entries "
                    + maxCompletionQueueEntries + ", max work requests " + maxWorkRequests);
        }
    }

    /**
     * A software provider (tcp, shm): it executes every operation itself with the JVM's atomics on the target's
     * memory, applies the write-latency model, and its queues are bounded only by the endpoints' depths.
     */
    public static FabricCapabilities software(String device) {
        return new FabricCapabilities(device, Integer.MAX_VALUE, Integer.MAX_VALUE, true, Atomicity.GLOBAL, true, true,
                true);
    }

    /** The message of a refusal: {@code what} needs {@code capability}, which {@link #device} lacks. */
    public String missing(String what, String capability) {
        return what + " is not supported by " + device + ": it lacks " + capability;
    }

    /** A completion queue of {@code entries} fits, else a FabricException naming the value and the limit. */
    public void checkCompletionQueue(int entries) {
        if (entries > maxCompletionQueueEntries) {
            throw new FabricException("completion queue of " + entries + " entries exceeds the limit of "
                    + maxCompletionQueueEntries + " of " + device);
        }
    }

    /** A send or receive queue of {@code depth} work requests fits, else a FabricException naming value and limit. */
    public void checkQueueDepth(String which, int depth) {
        if (depth > maxWorkRequests) {
            throw new FabricException(which + " of " + depth + " work requests exceeds the limit of " + maxWorkRequests
                    + " of " + device);
        }
    }
}
