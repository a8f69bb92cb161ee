package io.erda.ffm.verbs;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;

/**
 * A preallocated native array of {@code struct ibv_wc} that {@link IbvCompletionQueue#poll} fills, and
 * the decoder of its entries (flyweight style: index-based getters, no object per completion).
 */
public final class WorkCompletions {
    private static final long STRIDE = Verbs.ibv_wc.byteSize();

    private final MemorySegment array;
    private final int capacity;
    private int count;

    public WorkCompletions(Arena arena, int capacity) {
        this(arena.allocate(Verbs.ibv_wc, capacity), capacity);
    }

    /** Over existing memory, e.g. the wc array a fake poll_cq receives. */
    public WorkCompletions(MemorySegment array, int capacity) {
        if (capacity <= 0 || array.byteSize() < STRIDE * capacity) {
            throw new IllegalArgumentException("need " + capacity + " ibv_wc of " + STRIDE + " bytes, segment has "
                    + array.byteSize());
        }
        this.array = array;
        this.capacity = capacity;
    }

    public MemorySegment segment() {
        return array;
    }

    public int capacity() {
        return capacity;
    }

    /** How many entries the last poll returned. */
    public int count() {
        return count;
    }

    void count(int count) {
        this.count = count;
    }

    private long base(int i) {
        if (i < 0 || i >= capacity) {
            throw new IndexOutOfBoundsException("completion " + i + " of " + capacity);
        }
        return i * STRIDE;
    }

    public long wrId(int i) {
        return (long) Verbs.ibv_wc$wr_id.get(array, base(i));
    }

    /** {@code Verbs.IBV_WC_SUCCESS} or an error status. */
    public int status(int i) {
        return (int) Verbs.ibv_wc$status.get(array, base(i));
    }

    public boolean succeeded(int i) {
        return status(i) == Verbs.IBV_WC_SUCCESS;
    }

    /** {@code Verbs.IBV_WC_*} opcode; only valid for successful completions. */
    public int opcode(int i) {
        return (int) Verbs.ibv_wc$opcode.get(array, base(i));
    }

    public int byteLength(int i) {
        return (int) Verbs.ibv_wc$byte_len.get(array, base(i));
    }

    public int vendorError(int i) {
        return (int) Verbs.ibv_wc$vendor_err.get(array, base(i));
    }

    public int qpNum(int i) {
        return (int) Verbs.ibv_wc$qp_num.get(array, base(i));
    }

    public boolean hasImmediate(int i) {
        return ((int) Verbs.ibv_wc$wc_flags.get(array, base(i)) & Verbs.IBV_WC_WITH_IMM) != 0;
    }

    /** Immediate data in host order (the wire carries it big-endian, verbs hands it over as is). */
    public int immediate(int i) {
        return Integer.reverseBytes((int) Verbs.ibv_wc$imm_data.get(array, base(i)));
    }

    /** Writes one entry (for fakes and software providers that produce completions). */
    public void put(int i, long wrId, int status, int opcode, int byteLength, int qpNum) {
        long b = base(i);
        array.asSlice(b, STRIDE).fill((byte) 0);
        Verbs.ibv_wc$wr_id.set(array, b, wrId);
        Verbs.ibv_wc$status.set(array, b, status);
        Verbs.ibv_wc$opcode.set(array, b, opcode);
        Verbs.ibv_wc$byte_len.set(array, b, byteLength);
        Verbs.ibv_wc$qp_num.set(array, b, qpNum);
    }
}
