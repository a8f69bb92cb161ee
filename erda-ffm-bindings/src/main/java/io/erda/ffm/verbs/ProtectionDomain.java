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
    public QueuePair createQueuePair(IbvCompletionQueue sendCq, IbvCompletionQueue recvCq, QueuePairCapacity capacity) {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment attr = arena.allocate(Verbs.ibv_qp_init_attr);
            fill(attr, sendCq, recvCq, capacity);
            return new QueuePair(context.verbs(), context.verbs().createQp(pd, attr));
        }
    }

    /**
     * An RC queue pair made by ibv_create_qp_ex with the extended send operations {@code sendOps}
     * (IBV_QP_EX_WITH_*), so that {@link QueuePair#extended()} can post them; fails (EOPNOTSUPP, EINVAL) when the
     * provider or the device does not support one of them.
     */
    public QueuePair createQueuePairEx(IbvCompletionQueue sendCq, IbvCompletionQueue recvCq, QueuePairCapacity capacity,
                                       long sendOps) {
        VerbsLibrary verbs = context.verbs();
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment attr = arena.allocate(Verbs.ibv_qp_init_attr_ex);
            fill(attr, sendCq, recvCq, capacity);
            Verbs.ibv_qp_init_attr_ex$comp_mask.set(attr, 0L, Verbs.IBV_QP_INIT_ATTR_PD | Verbs.IBV_QP_INIT_ATTR_SEND_OPS_FLAGS);
            Verbs.ibv_qp_init_attr_ex$pd.set(attr, 0L, pd);
            Verbs.ibv_qp_init_attr_ex$send_ops_flags.set(attr, 0L, sendOps);
            MemorySegment qp = verbs.createQpEx(context.segment(), attr);
            MemorySegment qpx = verbs.qpToQpEx(qp);
            if (qpx.equals(MemorySegment.NULL)) {
                verbs.destroyQp(qp);
                throw new VerbsException("ibv_qp_to_qp_ex", 0, Errno.EINVAL, "QP from ibv_create_qp_ex has no ibv_qp_ex");
            }
            return new QueuePair(verbs, qp, qpx, sendOps);
        }
    }

    /**
     * The fields ibv_qp_init_attr and ibv_qp_init_attr_ex share: the latter starts with the former (ibv_create_qp_ex
     * casts one to the other), so the ibv_qp_init_attr handles address both.
     */
    private static void fill(MemorySegment attr, IbvCompletionQueue sendCq, IbvCompletionQueue recvCq, QueuePairCapacity capacity) {
        Verbs.ibv_qp_init_attr$send_cq.set(attr, 0L, sendCq.segment());
        Verbs.ibv_qp_init_attr$recv_cq.set(attr, 0L, recvCq.segment());
        Verbs.ibv_qp_init_attr$cap$max_send_wr.set(attr, 0L, capacity.maxSendWr());
        Verbs.ibv_qp_init_attr$cap$max_recv_wr.set(attr, 0L, capacity.maxRecvWr());
        Verbs.ibv_qp_init_attr$cap$max_send_sge.set(attr, 0L, capacity.maxSendSge());
        Verbs.ibv_qp_init_attr$cap$max_recv_sge.set(attr, 0L, capacity.maxRecvSge());
        Verbs.ibv_qp_init_attr$cap$max_inline_data.set(attr, 0L, capacity.maxInlineData());
        Verbs.ibv_qp_init_attr$qp_type.set(attr, 0L, Verbs.IBV_QPT_RC);
        Verbs.ibv_qp_init_attr$sq_sig_all.set(attr, 0L, 0);
    }

    @Override
    public void close() {
        context.verbs().deallocPd(pd);
    }
}
