package io.erda.ffm.verbs;

import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_LONG;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;

/**
 * The extended send API of a QP made by {@code ibv_create_qp_ex} ({@code struct ibv_qp_ex *}, from
 * {@code ibv_qp_to_qp_ex}). {@code ibv_wr_start}, {@code ibv_wr_rdma_write}, {@code ibv_wr_atomic_write},
 * {@code ibv_wr_flush}, {@code ibv_wr_set_sge}, {@code ibv_wr_complete}, ... are static inlines in verbs.h calling
 * the function pointers stored in the struct; the methods here call those pointers through {@link VerbsOps}, as
 * {@link QueuePair} does for post_send. A batch is {@link #start()}, one or more operations (each reads
 * {@code wr_id} and {@code wr_flags} as they are at that moment, see {@link #next}), then {@link #complete()}.
 *
 * <p>Only slots of operations the QP was created with ({@code send_ops_flags}) are read: a slot past the end of an
 * older library's struct (wr_atomic_write before v44, wr_flush before v45) would be garbage. Not thread-safe; the
 * owner of the QP's send lock drives it.
 */
public final class QueuePairEx {
    private final MemorySegment qpx;
    private final long sendOps;
    private final MemorySegment start;
    private final MemorySegment complete;
    private final MemorySegment abort;
    private final MemorySegment rdmaWrite;
    private final MemorySegment rdmaRead;
    private final MemorySegment setSge;
    private final MemorySegment atomicWrite;
    private final MemorySegment flush;
    private final MemorySegment atomicValue;

    QueuePairEx(MemorySegment qpx, long sendOps, Arena arena) {
        this.qpx = qpx.reinterpret(Verbs.ibv_qp_ex.byteSize());
        this.sendOps = sendOps;
        this.start = slot(Verbs.ibv_qp_ex$wr_start$OFFSET);
        this.complete = slot(Verbs.ibv_qp_ex$wr_complete$OFFSET);
        this.abort = slot(Verbs.ibv_qp_ex$wr_abort$OFFSET);
        this.rdmaWrite = slot(Verbs.ibv_qp_ex$wr_rdma_write$OFFSET);
        this.rdmaRead = slot(Verbs.ibv_qp_ex$wr_rdma_read$OFFSET);
        this.setSge = slot(Verbs.ibv_qp_ex$wr_set_sge$OFFSET);
        this.atomicWrite = supports(Verbs.IBV_QP_EX_WITH_ATOMIC_WRITE) ? slot(Verbs.ibv_qp_ex$wr_atomic_write$OFFSET) : null;
        this.flush = Verbs.ERDA_WR_FLUSH_OFFSET >= 0 && supports(Verbs.ERDA_QP_EX_WITH_FLUSH)
                ? slot(Verbs.ERDA_WR_FLUSH_OFFSET) : null;
        this.atomicValue = arena.allocate(JAVA_LONG);
    }

    private MemorySegment slot(long offset) {
        return qpx.get(ADDRESS, offset);
    }

    public MemorySegment segment() {
        return qpx;
    }

    /** The IBV_QP_EX_WITH_* flags the QP was created with. */
    public long sendOps() {
        return sendOps;
    }

    public boolean supports(long sendOpFlag) {
        return sendOpFlag != 0 && (sendOps & sendOpFlag) == sendOpFlag;
    }

    /** Whether {@link #atomicWrite} may be called (the QP was created with IBV_QP_EX_WITH_ATOMIC_WRITE). */
    public boolean hasAtomicWrite() {
        return atomicWrite != null;
    }

    /** Whether {@link #flush} may be called (bindings generated with FLUSH and the QP created with it). */
    public boolean hasFlush() {
        return flush != null;
    }

    /** ibv_wr_start. */
    public void start() {
        try {
            VerbsOps.WR_START.invokeExact(start, qpx);
        } catch (Throwable t) {
            throw IbvCompletionQueue.rethrow(t);
        }
    }

    /** Sets {@code qpx->wr_id} and {@code qpx->wr_flags} (IBV_SEND_*) for the next operation. */
    public QueuePairEx next(long wrId, int sendFlags) {
        Verbs.ibv_qp_ex$wr_id.set(qpx, 0L, wrId);
        Verbs.ibv_qp_ex$wr_flags.set(qpx, 0L, sendFlags);
        return this;
    }

    /** ibv_wr_rdma_write; give the source with {@link #setSge}. */
    public QueuePairEx rdmaWrite(int rkey, long remoteAddress) {
        return rdma(rdmaWrite, rkey, remoteAddress);
    }

    /** ibv_wr_rdma_read; give the destination with {@link #setSge}. */
    public QueuePairEx rdmaRead(int rkey, long remoteAddress) {
        return rdma(rdmaRead, rkey, remoteAddress);
    }

    private QueuePairEx rdma(MemorySegment function, int rkey, long remoteAddress) {
        try {
            VerbsOps.WR_RDMA.invokeExact(function, qpx, rkey, remoteAddress);
        } catch (Throwable t) {
            throw IbvCompletionQueue.rethrow(t);
        }
        return this;
    }

    /** ibv_wr_set_sge. */
    public QueuePairEx setSge(int lkey, long address, int length) {
        try {
            VerbsOps.WR_SET_SGE.invokeExact(setSge, qpx, lkey, address, length);
        } catch (Throwable t) {
            throw IbvCompletionQueue.rethrow(t);
        }
        return this;
    }

    /**
     * ibv_wr_atomic_write: 8 bytes, {@code value} in host order, to the 8-byte aligned {@code remoteAddress}. The
     * value is copied into the work request by the call (verbs passes a pointer to 8 bytes), so one slot suffices.
     */
    public QueuePairEx atomicWrite(int rkey, long remoteAddress, long value) {
        if (atomicWrite == null) {
            throw new IllegalStateException("QP was created without IBV_QP_EX_WITH_ATOMIC_WRITE");
        }
        atomicValue.set(JAVA_LONG, 0, value);
        try {
            VerbsOps.WR_ATOMIC_WRITE.invokeExact(atomicWrite, qpx, rkey, remoteAddress, atomicValue);
        } catch (Throwable t) {
            throw IbvCompletionQueue.rethrow(t);
        }
        return this;
    }

    /**
     * ibv_wr_flush (rdma-core v45) of {@code [remoteAddress, +length)} with placement type {@code type}
     * (IBV_FLUSH_PERSISTENT, {@link Verbs#ERDA_FLUSH_PERSISTENT}) and selectivity {@code level} (IBV_FLUSH_RANGE).
     */
    public QueuePairEx flush(int rkey, long remoteAddress, long length, int type, int level) {
        if (flush == null) {
            throw new IllegalStateException("no wr_flush: bindings generated without FLUSH (ERDA_HAVE_WR_FLUSH="
                    + Verbs.ERDA_HAVE_WR_FLUSH + ") or QP created without IBV_QP_EX_WITH_FLUSH");
        }
        try {
            VerbsOps.WR_FLUSH.invokeExact(flush, qpx, rkey, remoteAddress, length, (byte) type, (byte) level);
        } catch (Throwable t) {
            throw IbvCompletionQueue.rethrow(t);
        }
        return this;
    }

    /** ibv_wr_complete: posts the batch; a nonzero return (an errno) is a {@link VerbsException}. */
    public void complete() {
        int rc;
        try {
            rc = (int) VerbsOps.WR_COMPLETE.invokeExact(complete, qpx);
        } catch (Throwable t) {
            throw IbvCompletionQueue.rethrow(t);
        }
        if (rc != 0) {
            throw new VerbsException("ibv_wr_complete", rc, rc);
        }
    }

    /** ibv_wr_abort: drops the batch started by {@link #start()}. */
    public void abort() {
        try {
            VerbsOps.WR_START.invokeExact(abort, qpx);
        } catch (Throwable t) {
            throw IbvCompletionQueue.rethrow(t);
        }
    }
}
