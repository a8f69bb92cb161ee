package io.erda.ffm.verbs;

import java.lang.foreign.Arena;
import java.lang.foreign.MemoryLayout;
import java.lang.foreign.MemorySegment;
import java.lang.invoke.VarHandle;

/**
 * Native memory shared by the send and receive writers: an array of work requests (send or recv
 * layout), one {@code ibv_sge} each, linked through their {@code next} pointers as they are appended.
 */
final class RequestChain {
    private static final long SGE = Verbs.ibv_sge.byteSize();

    private final MemorySegment wrs;
    private final MemorySegment sges;
    private final long stride;
    private final VarHandle next;
    private final VarHandle sgList;
    private final VarHandle numSge;
    private final int capacity;
    private int count;

    RequestChain(Arena arena, int capacity, MemoryLayout wrLayout, VarHandle next, VarHandle sgList, VarHandle numSge) {
        if (capacity <= 0) {
            throw new IllegalArgumentException("capacity must be positive, got " + capacity);
        }
        this.capacity = capacity;
        this.stride = wrLayout.byteSize();
        this.wrs = arena.allocate(wrLayout, capacity);
        this.sges = arena.allocate(Verbs.ibv_sge, capacity);
        this.next = next;
        this.sgList = sgList;
        this.numSge = numSge;
    }

    MemorySegment wrs() {
        return wrs;
    }

    int count() {
        return count;
    }

    int capacity() {
        return capacity;
    }

    void reset() {
        count = 0;
    }

    int indexOf(MemorySegment wr) {
        return (int) ((wr.address() - wrs.address()) / stride);
    }

    /** Offset of the last appended work request in {@link #wrs()}. */
    long last() {
        if (count == 0) {
            throw new IllegalStateException("no work request appended yet");
        }
        return (count - 1) * stride;
    }

    /** Appends a zeroed work request with its SGE filled and linked; returns its offset in {@link #wrs()}. */
    long append(long localAddress, int length, int lkey) {
        if (count == capacity) {
            throw new IllegalStateException("work request chain is full (" + capacity + "); post and reset first");
        }
        long wr = count * stride;
        long sge = count * SGE;
        wrs.asSlice(wr, stride).fill((byte) 0);
        Verbs.ibv_sge$addr.set(sges, sge, localAddress);
        Verbs.ibv_sge$length.set(sges, sge, length);
        Verbs.ibv_sge$lkey.set(sges, sge, lkey);
        sgList.set(wrs, wr, sges.asSlice(sge, SGE));
        numSge.set(wrs, wr, length == 0 ? 0 : 1);
        next.set(wrs, wr, MemorySegment.NULL);
        if (count > 0) {
            next.set(wrs, wr - stride, wrs.asSlice(wr, stride));
        }
        count++;
        return wr;
    }
}
