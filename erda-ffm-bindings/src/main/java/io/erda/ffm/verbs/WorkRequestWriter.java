package io.erda.ffm.verbs;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;

/**
 * Flyweight that fills a chain of {@code struct ibv_send_wr}, one {@code struct ibv_sge} each, in
 * native memory allocated once. Append operations, adjust the last one with {@link #signaled()} or
 * {@link #fenced()}, post with {@link QueuePair#postSend(WorkRequestWriter)}, then {@link #reset()}.
 * Not thread-safe; one writer per posting thread.
 *
 * <pre>
 *  wrs:  [ibv_send_wr 0]--next-->[ibv_send_wr 1]--next--> ... NULL     (Verbs.ibv_send_wr each)
 *           | sg_list               | sg_list
 *  sges: [ibv_sge 0]             [ibv_sge 1]                           (Verbs.ibv_sge each)
 * </pre>
 */
public final class WorkRequestWriter {
    /** Remote atomics operate on exactly 8 bytes. */
    public static final int ATOMIC_LENGTH = 8;

    private final RequestChain chain;
    private final MemorySegment wrs;

    public WorkRequestWriter(Arena arena, int capacity) {
        this.chain = new RequestChain(arena, capacity, Verbs.ibv_send_wr, Verbs.ibv_send_wr$next$OFFSET,
                Verbs.ibv_send_wr$sg_list$OFFSET, Verbs.ibv_send_wr$num_sge$OFFSET);
        this.wrs = chain.wrs();
    }

    public WorkRequestWriter reset() {
        chain.reset();
        return this;
    }

    public int count() {
        return chain.count();
    }

    public int capacity() {
        return chain.capacity();
    }

    /** The first work request of the chain, what post_send receives. */
    public MemorySegment head() {
        return wrs;
    }

    /** The index of {@code wr} in the chain (e.g. the bad_wr a provider reported). */
    public int indexOf(MemorySegment wr) {
        return chain.indexOf(wr);
    }

    private long append(long wrId, int opcode, long localAddress, int length, int lkey) {
        long wr = chain.append(localAddress, length, lkey);
        Verbs.ibv_send_wr$wr_id.set(wrs, wr, wrId);
        Verbs.ibv_send_wr$opcode.set(wrs, wr, opcode);
        return wr;
    }

    private WorkRequestWriter rdma(long wrId, int opcode, long localAddress, int length, int lkey,
                                   long remoteAddress, int rkey) {
        long wr = append(wrId, opcode, localAddress, length, lkey);
        Verbs.ibv_send_wr$wr$rdma$remote_addr.set(wrs, wr, remoteAddress);
        Verbs.ibv_send_wr$wr$rdma$rkey.set(wrs, wr, rkey);
        return this;
    }

    /** RDMA READ of {@code length} bytes at remote → local. */
    public WorkRequestWriter read(long wrId, long localAddress, int length, int lkey, long remoteAddress, int rkey) {
        return rdma(wrId, Verbs.IBV_WR_RDMA_READ, localAddress, length, lkey, remoteAddress, rkey);
    }

    /** RDMA WRITE of {@code length} bytes local → remote. */
    public WorkRequestWriter write(long wrId, long localAddress, int length, int lkey, long remoteAddress, int rkey) {
        return rdma(wrId, Verbs.IBV_WR_RDMA_WRITE, localAddress, length, lkey, remoteAddress, rkey);
    }

    /** RDMA WRITE that also consumes a receive at the peer, delivering {@code immediate} (host order). */
    public WorkRequestWriter writeWithImmediate(long wrId, long localAddress, int length, int lkey,
                                               long remoteAddress, int rkey, int immediate) {
        rdma(wrId, Verbs.IBV_WR_RDMA_WRITE_WITH_IMM, localAddress, length, lkey, remoteAddress, rkey);
        Verbs.ibv_send_wr$imm_data.set(wrs, chain.last(), Integer.reverseBytes(immediate));
        return this;
    }

    /** Two-sided SEND of {@code length} bytes. */
    public WorkRequestWriter send(long wrId, long localAddress, int length, int lkey) {
        append(wrId, Verbs.IBV_WR_SEND, localAddress, length, lkey);
        return this;
    }

    private WorkRequestWriter atomic(long wrId, int opcode, long localAddress, int lkey, long remoteAddress,
                                     int rkey, long compareAdd, long swap) {
        long wr = append(wrId, opcode, localAddress, ATOMIC_LENGTH, lkey);
        Verbs.ibv_send_wr$wr$atomic$remote_addr.set(wrs, wr, remoteAddress);
        Verbs.ibv_send_wr$wr$atomic$rkey.set(wrs, wr, rkey);
        Verbs.ibv_send_wr$wr$atomic$compare_add.set(wrs, wr, compareAdd);
        Verbs.ibv_send_wr$wr$atomic$swap.set(wrs, wr, swap);
        return this;
    }

    /** 8-byte compare-and-swap at remote; the old value lands in the 8 local bytes. */
    public WorkRequestWriter compareAndSwap(long wrId, long localAddress, int lkey, long remoteAddress, int rkey,
                                            long expected, long swap) {
        return atomic(wrId, Verbs.IBV_WR_ATOMIC_CMP_AND_SWP, localAddress, lkey, remoteAddress, rkey, expected, swap);
    }

    /** 8-byte fetch-and-add at remote; the old value lands in the 8 local bytes. */
    public WorkRequestWriter fetchAdd(long wrId, long localAddress, int lkey, long remoteAddress, int rkey, long add) {
        return atomic(wrId, Verbs.IBV_WR_ATOMIC_FETCH_AND_ADD, localAddress, lkey, remoteAddress, rkey, add, 0L);
    }

    private WorkRequestWriter flag(int flag) {
        long wr = chain.last();
        Verbs.ibv_send_wr$send_flags.set(wrs, wr, (int) Verbs.ibv_send_wr$send_flags.get(wrs, wr) | flag);
        return this;
    }

    /** The last work request produces a completion. */
    public WorkRequestWriter signaled() {
        return flag(Verbs.IBV_SEND_SIGNALED);
    }

    /** The last work request waits for prior READs/atomics to complete. */
    public WorkRequestWriter fenced() {
        return flag(Verbs.IBV_SEND_FENCE);
    }

    /** The last work request's payload is copied at post time (length up to max_inline_data). */
    public WorkRequestWriter inline() {
        return flag(Verbs.IBV_SEND_INLINE);
    }
}
