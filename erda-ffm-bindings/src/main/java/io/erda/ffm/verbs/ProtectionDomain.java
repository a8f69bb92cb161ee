package io.erda.ffm.verbs;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;

/** {@code struct ibv_pd *}: owner of memory registrations and queue pairs. */
public final class ProtectionDomain implements AutoCloseable {
    private final IbvContext context;
    private final MemorySegment pd;

    ProtectionDomain(IbvContext context, MemorySegment pd) {
        this.context = context;
        this.pd = pd;
    }

    public IbvContext context() {
        return context;
    }

    public MemorySegment segment() {
        return pd;
    }

    /**
     * Registers {@code memory} (native, e.g. a mapped PM file) with {@code access}, a mask of
     * {@code Verbs.IBV_ACCESS_*}.
     */
    public MemoryRegistration register(MemorySegment memory, int access) {
        if (!memory.isNative()) {
            throw new IllegalArgumentException("only native memory can be registered, got a heap segment of "
                    + memory.byteSize() + " bytes");
        }
        return new MemoryRegistration(context.verbs(), context.verbs().regMr(pd, memory, access), memory);
    }

    /** An RC queue pair in RESET; use its modifyTo* methods to bring it to RTS. */
    public QueuePair createQueuePair(CompletionQueue sendCq, CompletionQueue recvCq, QueuePairCapacity capacity) {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment attr = arena.allocate(Verbs.ibv_qp_init_attr);
            Verbs.ibv_qp_init_attr$send_cq.set(attr, 0L, sendCq.segment());
            Verbs.ibv_qp_init_attr$recv_cq.set(attr, 0L, recvCq.segment());
            Verbs.ibv_qp_init_attr$cap$max_send_wr.set(attr, 0L, capacity.maxSendWr());
            Verbs.ibv_qp_init_attr$cap$max_recv_wr.set(attr, 0L, capacity.maxRecvWr());
            Verbs.ibv_qp_init_attr$cap$max_send_sge.set(attr, 0L, capacity.maxSendSge());
            Verbs.ibv_qp_init_attr$cap$max_recv_sge.set(attr, 0L, capacity.maxRecvSge());
            Verbs.ibv_qp_init_attr$cap$max_inline_data.set(attr, 0L, capacity.maxInlineData());
            Verbs.ibv_qp_init_attr$qp_type.set(attr, 0L, Verbs.IBV_QPT_RC);
            Verbs.ibv_qp_init_attr$sq_sig_all.set(attr, 0L, 0);
            return new QueuePair(context.verbs(), context.verbs().createQp(pd, attr));
        }
    }

    @Override
    public void close() {
        context.verbs().deallocPd(pd);
    }
}
