package io.erda.remotelog;

/**
 * The persistence domain of the responder: the part of its memory hierarchy, and of its RNIC, whose contents survive a
 * power failure (paper §3.1.1).
 */
public enum Domain {
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
    WSP
}
