package io.erda.ffm.verbs;

import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;

import java.lang.foreign.Arena;
import java.lang.foreign.MemoryLayout;
import java.lang.foreign.MemorySegment;

/**
 * Native memory shared by the send and receive writers: an array of work requests (send or recv
 * layout), one {@code ibv_sge} each, linked through their {@code next} pointers as they are appended.
 *
 * <p>The linking fields are written at byte offsets with the constant {@link java.lang.foreign.ValueLayout}s, and
 * pointers as their 8-byte addresses: the chain serves two struct layouts, and per-instance {@code VarHandle}s
 * (what it held before) are not constants to the JIT, so every set went through a generic, non-inlined
 * invocation with a type adaptation. That cost about 4 µs of a 64 B READ's ~70 µs on rxe0 under emulation (JFR
 * in the SoftRoCE VM), the largest single Java cost on the posting path.
 */
final class RequestChain {
    private static final long SGE = Verbs.ibv_sge.byteSize();

    static {
        if (ADDRESS.byteSize() != JAVA_LONG.byteSize()) {
            throw new ExceptionInInitializerError("verbs bindings need 8-byte pointers, this platform has "
                    + ADDRESS.byteSize());
        }
    }

    private final MemorySegment wrs;
    private final MemorySegment sges;
    private final long wrsAddress;
    private final long sgesAddress;
    private final long stride;
    private final long nextOffset;
    private final long sgListOffset;
    private final long numSgeOffset;
    private final int capacity;
    private int count;

    /**
     * {@code nextOffset}, {@code sgListOffset}, {@code numSgeOffset}: where {@code wrLayout} keeps its {@code next}
     * pointer, its {@code sg_list} pointer and its {@code int num_sge}.
     */
    RequestChain(Arena arena, int capacity, MemoryLayout wrLayout, long nextOffset, long sgListOffset, long numSgeOffset) {
        if (capacity <= 0) {
            throw new IllegalArgumentException("capacity must be positive, got " + capacity);
        }
        this.capacity = capacity;
        this.stride = wrLayout.byteSize();
        this.wrs = arena.allocate(wrLayout, capacity);
        this.sges = arena.allocate(Verbs.ibv_sge, capacity);
        this.wrsAddress = wrs.address();
        this.sgesAddress = sges.address();
        this.nextOffset = nextOffset;
        this.sgListOffset = sgListOffset;
        this.numSgeOffset = numSgeOffset;
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
        return (int) ((wr.address() - wrsAddress) / stride);
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
        wrs.asSlice(wr, stride).fill((byte) 0); // next = NULL among the rest
        sges.set(JAVA_LONG, sge + Verbs.ibv_sge$addr$OFFSET, localAddress);
        sges.set(JAVA_INT, sge + Verbs.ibv_sge$length$OFFSET, length);
        sges.set(JAVA_INT, sge + Verbs.ibv_sge$lkey$OFFSET, lkey);
        wrs.set(JAVA_LONG, wr + sgListOffset, sgesAddress + sge);
        wrs.set(JAVA_INT, wr + numSgeOffset, length == 0 ? 0 : 1);
        if (count > 0) {
            wrs.set(JAVA_LONG, wr - stride + nextOffset, wrsAddress + wr);
        }
        count++;
        return wr;
    }
}
