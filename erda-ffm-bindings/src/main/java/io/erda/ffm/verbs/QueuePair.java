package io.erda.ffm.verbs;

import static java.lang.foreign.ValueLayout.ADDRESS;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;

/**
 * An RC {@code struct ibv_qp *}. postSend/postRecv are ibv_post_send/ibv_post_recv, static inline
 * in verbs.h: {@code qp->context->ops.post_send(qp, wr, &bad_wr)}; the function pointers are read
 * once here, and called as critical downcalls for the real library ({@link VerbsLibrary#criticalDataPath()}).
 * Posting is not thread-safe (one bad_wr slot per QP); one poster per QP.
 */
public final class QueuePair implements AutoCloseable {
    private final VerbsLibrary verbs;
    private final MemorySegment qp;
    private final MemorySegment postSend;
    private final MemorySegment postRecv;
    private final MemorySegment badWr;
    private final Arena arena = Arena.ofShared();
    private final QueuePairEx extended;
    private final boolean critical;

    QueuePair(VerbsLibrary verbs, MemorySegment qp) {
        this(verbs, qp, MemorySegment.NULL, 0);
    }

    /** @param qpx the QP's {@code ibv_qp_ex} (NULL for a QP made by ibv_create_qp), created with {@code sendOps} */
    QueuePair(VerbsLibrary verbs, MemorySegment qp, MemorySegment qpx, long sendOps) {
        this.verbs = verbs;
        this.qp = qp;
        this.critical = verbs.criticalDataPath();
        MemorySegment context = (MemorySegment) Verbs.ibv_qp$context.get(qp, 0L);
        this.postSend = IbvContext.op(context, Verbs.ibv_context$ops$post_send$OFFSET);
        this.postRecv = IbvContext.op(context, Verbs.ibv_context$ops$post_recv$OFFSET);
        this.badWr = arena.allocate(ADDRESS);
        this.extended = qpx.equals(MemorySegment.NULL) ? null : new QueuePairEx(qpx, sendOps, arena);
    }

    /** The extended send API ({@code ibv_wr_*}), or null for a QP made by ibv_create_qp. */
    public QueuePairEx extended() {
        return extended;
    }

    public MemorySegment segment() {
        return qp;
    }

    public int qpNum() {
        return (int) Verbs.ibv_qp$qp_num.get(qp, 0L);
    }

    /** The state the library last recorded in {@code qp->state}. */
    public int state() {
        return (int) Verbs.ibv_qp$state.get(qp, 0L);
    }

    /** Posts the writer's chain; on failure names the rejected work request. */
    public void postSend(WorkRequestWriter requests) {
        int rc = post(postSend, requests.head());
        if (rc != 0) {
            MemorySegment bad = badWr.get(ADDRESS, 0);
            throw new VerbsException("ibv_post_send", rc, rc, "rejected work request "
                    + requests.indexOf(bad) + " of " + requests.count());
        }
    }

    public void postRecv(ReceiveRequestWriter requests) {
        int rc = post(postRecv, requests.head());
        if (rc != 0) {
            MemorySegment bad = badWr.get(ADDRESS, 0);
            throw new VerbsException("ibv_post_recv", rc, rc, "rejected receive request "
                    + requests.indexOf(bad) + " of " + requests.count());
        }
    }

    private int post(MemorySegment function, MemorySegment chain) {
        try {
            return critical ? (int) VerbsOps.POST_SEND_CRITICAL.invokeExact(function, qp, chain, badWr)
                    : (int) VerbsOps.POST_SEND.invokeExact(function, qp, chain, badWr);
        } catch (Throwable t) {
            throw IbvCompletionQueue.rethrow(t);
        }
    }

    /** RESET → INIT: port, pkey 0, remote access flags. */
    public void modifyToInit(ConnectionParameters p) {
        try (Arena a = Arena.ofConfined()) {
            MemorySegment attr = a.allocate(Verbs.ibv_qp_attr);
            Verbs.ibv_qp_attr$qp_state.set(attr, 0L, Verbs.IBV_QPS_INIT);
            Verbs.ibv_qp_attr$pkey_index.set(attr, 0L, (short) 0);
            Verbs.ibv_qp_attr$port_num.set(attr, 0L, (byte) p.port());
            Verbs.ibv_qp_attr$qp_access_flags.set(attr, 0L, p.accessFlags());
            verbs.modifyQp(qp, attr, Verbs.IBV_QP_STATE | Verbs.IBV_QP_PKEY_INDEX | Verbs.IBV_QP_PORT
                    | Verbs.IBV_QP_ACCESS_FLAGS);
        }
    }

    /**
     * INIT → RTR towards {@code remote}: its QP number and PSN, addressed by LID, and by GID
     * (is_global) when the remote GID is not all zero (RoCE needs it).
     */
    public void modifyToRtr(ConnectionParameters p, QpInfo remote) {
        try (Arena a = Arena.ofConfined()) {
            MemorySegment attr = a.allocate(Verbs.ibv_qp_attr);
            Verbs.ibv_qp_attr$qp_state.set(attr, 0L, Verbs.IBV_QPS_RTR);
            Verbs.ibv_qp_attr$path_mtu.set(attr, 0L, p.mtu());
            Verbs.ibv_qp_attr$dest_qp_num.set(attr, 0L, remote.qpNum());
            Verbs.ibv_qp_attr$rq_psn.set(attr, 0L, remote.psn());
            Verbs.ibv_qp_attr$max_dest_rd_atomic.set(attr, 0L, (byte) p.maxRdAtomic());
            Verbs.ibv_qp_attr$min_rnr_timer.set(attr, 0L, (byte) p.minRnrTimer());
            Verbs.ibv_qp_attr$ah_attr$dlid.set(attr, 0L, (short) remote.lid());
            Verbs.ibv_qp_attr$ah_attr$port_num.set(attr, 0L, (byte) p.port());
            if (remote.hasGid()) {
                Verbs.ibv_qp_attr$ah_attr$is_global.set(attr, 0L, (byte) 1);
                Verbs.ibv_qp_attr$ah_attr$grh$hop_limit.set(attr, 0L, (byte) 1);
                Verbs.ibv_qp_attr$ah_attr$grh$sgid_index.set(attr, 0L, (byte) p.gidIndex());
                MemorySegment.copy(MemorySegment.ofArray(remote.gid()), 0, attr,
                        Verbs.ibv_qp_attr$ah_attr$grh$dgid$raw$OFFSET, QpInfo.GID_LENGTH);
            }
            verbs.modifyQp(qp, attr, Verbs.IBV_QP_STATE | Verbs.IBV_QP_AV | Verbs.IBV_QP_PATH_MTU
                    | Verbs.IBV_QP_DEST_QPN | Verbs.IBV_QP_RQ_PSN | Verbs.IBV_QP_MAX_DEST_RD_ATOMIC
                    | Verbs.IBV_QP_MIN_RNR_TIMER);
        }
    }

    /** RTR → RTS with our send PSN (the one we advertised in our {@link QpInfo}). */
    public void modifyToRts(ConnectionParameters p, int sendPsn) {
        try (Arena a = Arena.ofConfined()) {
            MemorySegment attr = a.allocate(Verbs.ibv_qp_attr);
            Verbs.ibv_qp_attr$qp_state.set(attr, 0L, Verbs.IBV_QPS_RTS);
            Verbs.ibv_qp_attr$sq_psn.set(attr, 0L, sendPsn);
            Verbs.ibv_qp_attr$timeout.set(attr, 0L, (byte) p.timeout());
            Verbs.ibv_qp_attr$retry_cnt.set(attr, 0L, (byte) p.retryCount());
            Verbs.ibv_qp_attr$rnr_retry.set(attr, 0L, (byte) p.rnrRetry());
            Verbs.ibv_qp_attr$max_rd_atomic.set(attr, 0L, (byte) p.maxRdAtomic());
            verbs.modifyQp(qp, attr, Verbs.IBV_QP_STATE | Verbs.IBV_QP_SQ_PSN | Verbs.IBV_QP_TIMEOUT
                    | Verbs.IBV_QP_RETRY_CNT | Verbs.IBV_QP_RNR_RETRY | Verbs.IBV_QP_MAX_QP_RD_ATOMIC);
        }
    }

    /**
     * ibv_modify_qp with attributes filled elsewhere, e.g. by rdma_init_qp_attr for a QP connected through rdma_cm
     * (see {@code io.erda.ffm.rdmacm.RdmaCmLibrary#modifyQp}).
     */
    public void modify(MemorySegment attr, int mask) {
        verbs.modifyQp(qp, attr, mask);
    }

    /**
     * Any state → ERR: every outstanding and later work request completes with IBV_WC_WR_FLUSH_ERR (how a
     * connection is torn down without destroying the QP before its completions are polled).
     */
    public void modifyToError() {
        try (Arena a = Arena.ofConfined()) {
            MemorySegment attr = a.allocate(Verbs.ibv_qp_attr);
            Verbs.ibv_qp_attr$qp_state.set(attr, 0L, Verbs.IBV_QPS_ERR);
            verbs.modifyQp(qp, attr, Verbs.IBV_QP_STATE);
        }
    }

    /** What the peer needs to reach this QP (send over {@link QpInfoExchange}). */
    public QpInfo localInfo(IbvContext context, ConnectionParameters p, int psn, byte[] privateData) {
        PortAttributes port = context.queryPort(p.port());
        byte[] gid = port.isEthernet() ? context.queryGid(p.port(), p.gidIndex()) : new byte[QpInfo.GID_LENGTH];
        return new QpInfo(qpNum(), port.lid(), gid, psn, privateData);
    }

    @Override
    public void close() {
        try {
            verbs.destroyQp(qp);
        } finally {
            arena.close();
        }
    }
}
