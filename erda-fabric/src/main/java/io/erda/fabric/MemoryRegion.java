package io.erda.fabric;

import java.lang.foreign.MemorySegment;

/**
 * A segment registered with a fabric ({@code ibv_mr}). Work requests name local memory by region and offset;
 * peers name it by {@link #descriptor()}. Closing deregisters: later remote accesses with its rkey fail with
 * {@link Status#REMOTE_ACCESS_ERROR}.
 */
public interface MemoryRegion extends AutoCloseable {

    MemorySegment segment();

    RegisterOptions options();

    /** The address peers use for the region's first byte (the segment's virtual address, as with verbs). */
    default long address() {
        return segment().address();
    }

    default long length() {
        return segment().byteSize();
    }

    int lkey();

    int rkey();

    /** What a peer needs to access the region one-sided. */
    default RemoteRegion descriptor() {
        return new RemoteRegion(address(), length(), rkey());
    }

    /**
     * Bytes written into this region by one-sided operations of peers (WRITE, WRITE_WITH_IMM, atomics), counted
     * where they are executed: by the NIC engine (tcp), by the initiators through a shared counter (shm), or by
     * the provider's best knowledge (verbs: counted on the initiator side is impossible, so it stays 0 there and
     * the store accounts from reservations). The store adds this to its own stores to report NVM bytes written.
     */
    long remoteBytesWritten();

    /** Deregisters. Idempotent. */
    @Override
    void close();
}
