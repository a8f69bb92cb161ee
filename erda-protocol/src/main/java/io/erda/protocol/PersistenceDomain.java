package io.erda.protocol;

/**
 * The persistence domain of a server (the responder): the part of its memory hierarchy, and of its RNIC, whose
 * contents survive a power failure (Kashyap et al., <i>Correct, Fast Remote Persistence</i>, §3.1.1; docs/persistence.md).
 * An update passes, in order, through the RNIC's buffers (received), the processor cache or the I/O controller
 * (placed) and the memory controller (written back); it is durable from the first stage inside the domain.
 */
public enum PersistenceDomain {
    /**
     * DIMM and memory-controller persistence: PM DIMMs and the integrated memory controller's buffers (ADR drains
     * them). Processor caches, the I/O controller's buffers and the RNIC's buffers are lost.
     */
    DMP,
    /**
     * Memory-hierarchy persistence: the whole memory hierarchy including processor caches (residual power flushes
     * them, eADR), but not the RNIC's buffers: what is placed is durable, what is only received is not.
     */
    MHP,
    /** Whole-system persistence: the RNIC's buffers too, so what the RNIC received is durable even before placement. */
    WSP;

    /** Whether an update the RNIC received but has not placed survives (WSP). */
    public boolean keepsReceived() {
        return this == WSP;
    }

    /** Whether an update placed in the processor cache or the I/O controller survives (MHP, WSP). */
    public boolean keepsPlaced() {
        return this != DMP;
    }
}
