package io.erda.ffm.verbs;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;

/** Flyweight filling a chain of {@code struct ibv_recv_wr} with one {@code ibv_sge} each. Not thread-safe. */
public final class ReceiveRequestWriter {
    private final RequestChain chain;

    public ReceiveRequestWriter(Arena arena, int capacity) {
        this.chain = new RequestChain(arena, capacity, Verbs.ibv_recv_wr, Verbs.ibv_recv_wr$next$OFFSET,
                Verbs.ibv_recv_wr$sg_list$OFFSET, Verbs.ibv_recv_wr$num_sge$OFFSET);
    }

    public ReceiveRequestWriter reset() {
        chain.reset();
        return this;
    }

    public int count() {
        return chain.count();
    }

    public MemorySegment head() {
        return chain.wrs();
    }

    public int indexOf(MemorySegment wr) {
        return chain.indexOf(wr);
    }

    /** A receive buffer of {@code length} bytes for one incoming SEND or WRITE_WITH_IMM. */
    public ReceiveRequestWriter receive(long wrId, long localAddress, int length, int lkey) {
        long wr = chain.append(localAddress, length, lkey);
        Verbs.ibv_recv_wr$wr_id.set(chain.wrs(), wr, wrId);
        return this;
    }
}
