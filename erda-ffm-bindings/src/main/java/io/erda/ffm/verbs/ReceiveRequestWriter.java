package io.erda.ffm.verbs;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;

/** Flyweight filling a chain of {@code struct ibv_recv_wr} with one {@code ibv_sge} each. Not thread-safe. */
public final class ReceiveRequestWriter {
    private static final long WR = Verbs.ibv_recv_wr.byteSize();
    private static final long SGE = Verbs.ibv_sge.byteSize();

    private final MemorySegment wrs;
    private final MemorySegment sges;
    private final int capacity;
    private int count;

    public ReceiveRequestWriter(Arena arena, int capacity) {
        if (capacity <= 0) {
            throw new IllegalArgumentException("capacity must be positive, got " + capacity);
        }
        this.capacity = capacity;
        this.wrs = arena.allocate(Verbs.ibv_recv_wr, capacity);
        this.sges = arena.allocate(Verbs.ibv_sge, capacity);
    }

    public ReceiveRequestWriter reset() {
        count = 0;
        return this;
    }

    public int count() {
        return count;
    }

    public MemorySegment head() {
        return wrs;
    }

    public int indexOf(MemorySegment wr) {
        return (int) ((wr.address() - wrs.address()) / WR);
    }

    /** A receive buffer of {@code length} bytes for one incoming SEND or WRITE_WITH_IMM. */
    public ReceiveRequestWriter receive(long wrId, long localAddress, int length, int lkey) {
        if (count == capacity) {
            throw new IllegalStateException("receive chain is full (" + capacity + "); post and reset first");
        }
        long wr = count * WR;
        long sge = count * SGE;
        wrs.asSlice(wr, WR).fill((byte) 0);
        Verbs.ibv_sge$addr.set(sges, sge, localAddress);
        Verbs.ibv_sge$length.set(sges, sge, length);
        Verbs.ibv_sge$lkey.set(sges, sge, lkey);
        Verbs.ibv_recv_wr$wr_id.set(wrs, wr, wrId);
        Verbs.ibv_recv_wr$sg_list.set(wrs, wr, sges.asSlice(sge, SGE));
        Verbs.ibv_recv_wr$num_sge.set(wrs, wr, 1);
        Verbs.ibv_recv_wr$next.set(wrs, wr, MemorySegment.NULL);
        if (count > 0) {
            Verbs.ibv_recv_wr$next.set(wrs, wr - WR, wrs.asSlice(wr, WR));
        }
        count++;
        return this;
    }
}
