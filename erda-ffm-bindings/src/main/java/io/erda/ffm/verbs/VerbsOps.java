package io.erda.ffm.verbs;

import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;

import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.invoke.MethodHandle;

/**
 * Unbound downcall handles for the data path: functions verbs.h declares static inline and that
 * dispatch through function pointers, either in {@code qp->context->ops} (post_send, post_recv,
 * poll_cq, req_notify_cq; offsets from {@link Verbs#IBV_CONTEXT}, ABI-stable since rdma-core v13) or
 * in {@code struct ibv_qp_ex} ({@code ibv_wr_*}). The first argument of every handle is the function
 * pointer read from that table, so no symbol lookup is involved and a fake context's upcall stubs
 * are called exactly like a real provider's functions. Linked when this class is first used.
 *
 * <p>The {@code *_CRITICAL} handles of poll_cq and post_send/post_recv are linked with
 * {@link Linker.Option#critical critical(false)}: the call skips the thread-state transition (the thread stays "in
 * Java", so a safepoint waits for the call to return) and passes no heap segments. That is sound only for native
 * code that is short and never calls back into Java: the real providers' data path (mlx5 writes a WQE and rings a
 * doorbell, polls memory; rxe's post_send adds one write(2) to its uverbs file, in which the kernel may run the
 * round trip), not a fake context's upcall stubs. {@link VerbsLibrary#criticalDataPath()} says which to use; under
 * emulation the transition made up a noticeable share of a 64 B READ (docs/verbs.md).
 */
public final class VerbsOps {
    private VerbsOps() {}

    private static final Linker LINKER = Linker.nativeLinker();

    /** int post_send(struct ibv_qp *, struct ibv_send_wr *, struct ibv_send_wr **bad_wr) */
    public static final FunctionDescriptor POST_SEND_DESC = FunctionDescriptor.of(JAVA_INT, ADDRESS, ADDRESS, ADDRESS);
    /** int post_recv(struct ibv_qp *, struct ibv_recv_wr *, struct ibv_recv_wr **bad_wr) */
    public static final FunctionDescriptor POST_RECV_DESC = POST_SEND_DESC;
    /** int poll_cq(struct ibv_cq *, int num_entries, struct ibv_wc *) */
    public static final FunctionDescriptor POLL_CQ_DESC = FunctionDescriptor.of(JAVA_INT, ADDRESS, JAVA_INT, ADDRESS);
    /** int req_notify_cq(struct ibv_cq *, int solicited_only) */
    public static final FunctionDescriptor REQ_NOTIFY_CQ_DESC = FunctionDescriptor.of(JAVA_INT, ADDRESS, JAVA_INT);

    /** void wr_start(struct ibv_qp_ex *), also wr_abort */
    public static final FunctionDescriptor WR_START_DESC = FunctionDescriptor.ofVoid(ADDRESS);
    /** int wr_complete(struct ibv_qp_ex *) */
    public static final FunctionDescriptor WR_COMPLETE_DESC = FunctionDescriptor.of(JAVA_INT, ADDRESS);
    /** void wr_rdma_read/wr_rdma_write(struct ibv_qp_ex *, uint32_t rkey, uint64_t remote_addr) */
    public static final FunctionDescriptor WR_RDMA_DESC = FunctionDescriptor.ofVoid(ADDRESS, JAVA_INT, JAVA_LONG);
    /** void wr_set_sge(struct ibv_qp_ex *, uint32_t lkey, uint64_t addr, uint32_t length) */
    public static final FunctionDescriptor WR_SET_SGE_DESC = FunctionDescriptor.ofVoid(ADDRESS, JAVA_INT, JAVA_LONG, JAVA_INT);
    /** void wr_atomic_write(struct ibv_qp_ex *, uint32_t rkey, uint64_t remote_addr, const void *atomic_wr) */
    public static final FunctionDescriptor WR_ATOMIC_WRITE_DESC =
            FunctionDescriptor.ofVoid(ADDRESS, JAVA_INT, JAVA_LONG, ADDRESS);
    /**
     * void wr_flush(struct ibv_qp_ex *, uint32_t rkey, uint64_t remote_addr, size_t len,
     * uint8_t type, uint8_t level) (rdma-core v45)
     */
    public static final FunctionDescriptor WR_FLUSH_DESC = FunctionDescriptor.ofVoid(ADDRESS, JAVA_INT, JAVA_LONG,
            JAVA_LONG, java.lang.foreign.ValueLayout.JAVA_BYTE, java.lang.foreign.ValueLayout.JAVA_BYTE);

    public static final MethodHandle POST_SEND = LINKER.downcallHandle(POST_SEND_DESC);
    public static final MethodHandle POST_SEND_CRITICAL = LINKER.downcallHandle(POST_SEND_DESC, Linker.Option.critical(false));
    public static final MethodHandle POST_RECV = LINKER.downcallHandle(POST_RECV_DESC);
    public static final MethodHandle POLL_CQ = LINKER.downcallHandle(POLL_CQ_DESC);
    public static final MethodHandle POLL_CQ_CRITICAL = LINKER.downcallHandle(POLL_CQ_DESC, Linker.Option.critical(false));
    public static final MethodHandle REQ_NOTIFY_CQ = LINKER.downcallHandle(REQ_NOTIFY_CQ_DESC);
    public static final MethodHandle WR_START = LINKER.downcallHandle(WR_START_DESC);
    public static final MethodHandle WR_COMPLETE = LINKER.downcallHandle(WR_COMPLETE_DESC);
    public static final MethodHandle WR_RDMA = LINKER.downcallHandle(WR_RDMA_DESC);
    public static final MethodHandle WR_SET_SGE = LINKER.downcallHandle(WR_SET_SGE_DESC);
    public static final MethodHandle WR_ATOMIC_WRITE = LINKER.downcallHandle(WR_ATOMIC_WRITE_DESC);
    public static final MethodHandle WR_FLUSH = LINKER.downcallHandle(WR_FLUSH_DESC);
}
