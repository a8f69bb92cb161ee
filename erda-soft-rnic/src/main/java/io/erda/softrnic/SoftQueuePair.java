package io.erda.softrnic;

import static io.erda.ffm.verbs.Verbs.IBV_QPS_ERR;
import static io.erda.ffm.verbs.Verbs.IBV_QPS_INIT;
import static io.erda.ffm.verbs.Verbs.IBV_QPS_RESET;
import static io.erda.ffm.verbs.Verbs.IBV_QPS_RTR;
import static io.erda.ffm.verbs.Verbs.IBV_QPS_RTS;
import static io.erda.ffm.verbs.Verbs.IBV_WC_SUCCESS;

import io.erda.ffm.verbs.Errno;
import io.erda.ffm.verbs.RnrTimer;
import io.erda.ffm.verbs.Verbs;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.VarHandle;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.locks.LockSupport;

/**
 * An RC queue pair of a {@link SoftRnicDevice} that executes what is posted to it.
 *
 * <p><b>Requester.</b> Posted sends queue up and a worker (a virtual thread, started when work arrives and gone when
 * the queue is empty, so an idle QP costs nothing) executes them one at a time in posting order, which gives RC
 * ordering for free. Each request is checked as an RNIC would: local lkey, range and LOCAL_WRITE
 * (IBV_WC_LOC_PROT_ERR); the peer found by (dlid, dest_qp_num) and in RTR/RTS (else IBV_WC_RETRY_EXC_ERR, the ack
 * timeout, reported at once); the remote rkey, range and access flags of the region and of the peer QP
 * (IBV_WC_REM_ACCESS_ERR, memory untouched); atomics 8-byte aligned (IBV_WC_REM_INV_REQ_ERR). SEND and
 * WRITE_WITH_IMM consume a posted receive at the peer, retrying on receiver-not-ready every peer min_rnr_timer up to
 * rnr_retry times (7: forever), then IBV_WC_RNR_RETRY_EXC_ERR.
 *
 * <p><b>Errors.</b> The first error completion moves the QP to ERR; what is queued or posted later completes with
 * IBV_WC_WR_FLUSH_ERR (always, signalled or not), and posted receives are flushed. A NAK-class error the responder
 * detected (remote access, invalid request, a receive too small) moves the responder to ERR too, as the IB spec's
 * responder error behaviour does. A request whose wait (RNR, write latency) is cut short by its own QP going to ERR
 * completes with WR_FLUSH_ERR; by the peer going away, with RETRY_EXC_ERR.
 */
final class SoftQueuePair {
    private static final VarHandle WORD = ValueLayout.JAVA_LONG.varHandle();
    private static final long MAX_SLICE_NANOS = 2_000_000;

    private final SoftRnicDevice device;
    private final MemorySegment qp;
    private final int qpNum;
    private final SoftCompletionQueue sendCq;
    private final SoftCompletionQueue recvCq;
    private final int maxRecvWr;
    private final ConcurrentLinkedQueue<PostedSend> sendQueue = new ConcurrentLinkedQueue<>();
    private final ArrayDeque<PostedReceive> receives = new ArrayDeque<>(); // guarded by this
    private final AtomicBoolean draining = new AtomicBoolean();

    private volatile int state = IBV_QPS_RESET;
    private volatile boolean destroyed;
    private volatile int accessFlags;
    private volatile int destQpNum;
    private volatile int dlid;
    private volatile int minRnrTimer;
    private volatile int rnrRetry;

    boolean reportsTo(SoftCompletionQueue cq) {
        return sendCq == cq || recvCq == cq;
    }

    SoftQueuePair(SoftRnicDevice device, MemorySegment qp, int qpNum, SoftCompletionQueue sendCq,
                  SoftCompletionQueue recvCq, int maxRecvWr) {
        this.device = device;
        this.qp = qp;
        this.qpNum = qpNum;
        this.sendCq = sendCq;
        this.recvCq = recvCq;
        this.maxRecvWr = maxRecvWr;
    }

    int qpNum() {
        return qpNum;
    }

    private boolean responsive() {
        int s = state;
        return !destroyed && (s == IBV_QPS_RTR || s == IBV_QPS_RTS);
    }

    private boolean broken() {
        return destroyed || state == IBV_QPS_ERR;
    }

    // ------------------------------------------------------------------ verbs entry points

    /** post_send: legal in RTS, and in ERR (flushed); EINVAL before RTS, as a real provider answers. */
    int postSend(List<PostedSend> wrs) {
        int s = state;
        if (s != IBV_QPS_RTS && s != IBV_QPS_ERR) {
            return Errno.EINVAL;
        }
        sendQueue.addAll(wrs);
        schedule();
        return 0;
    }

    /** post_recv: legal from INIT on; in ERR the receive is flushed at once. */
    int postRecv(List<PostedReceive> wrs) {
        synchronized (this) {
            if (state == IBV_QPS_RESET || destroyed) {
                return Errno.EINVAL;
            }
            if (state != IBV_QPS_ERR) {
                if (receives.size() + wrs.size() > maxRecvWr) {
                    return Errno.ENOMEM;
                }
                receives.addAll(wrs);
                return 0;
            }
        }
        wrs.forEach(this::flushReceive);
        return 0;
    }

    /** ibv_modify_qp: the RC state machine RESET → INIT → RTR → RTS, anything → ERR or RESET. */
    synchronized int modify(MemorySegment attr, int mask) {
        int target = (mask & Verbs.IBV_QP_STATE) != 0 ? (int) Verbs.ibv_qp_attr$qp_state.get(attr, 0L) : state;
        boolean legal = switch (target) {
            case IBV_QPS_RESET, IBV_QPS_ERR -> true;
            case IBV_QPS_INIT -> state == IBV_QPS_RESET || state == IBV_QPS_INIT;
            case IBV_QPS_RTR -> state == IBV_QPS_INIT;
            case IBV_QPS_RTS -> state == IBV_QPS_RTR || state == IBV_QPS_RTS;
            default -> false;
        };
        if (!legal || destroyed) {
            return Errno.EINVAL;
        }
        if ((mask & Verbs.IBV_QP_ACCESS_FLAGS) != 0) {
            accessFlags = (int) Verbs.ibv_qp_attr$qp_access_flags.get(attr, 0L);
        }
        if ((mask & Verbs.IBV_QP_AV) != 0) {
            dlid = Short.toUnsignedInt((short) Verbs.ibv_qp_attr$ah_attr$dlid.get(attr, 0L));
        }
        if ((mask & Verbs.IBV_QP_DEST_QPN) != 0) {
            destQpNum = (int) Verbs.ibv_qp_attr$dest_qp_num.get(attr, 0L);
        }
        if ((mask & Verbs.IBV_QP_MIN_RNR_TIMER) != 0) {
            minRnrTimer = Byte.toUnsignedInt((byte) Verbs.ibv_qp_attr$min_rnr_timer.get(attr, 0L));
        }
        if ((mask & Verbs.IBV_QP_RNR_RETRY) != 0) {
            rnrRetry = Byte.toUnsignedInt((byte) Verbs.ibv_qp_attr$rnr_retry.get(attr, 0L));
        }
        Verbs.ibv_qp$state.set(qp, 0L, target);
        if (target == IBV_QPS_ERR) {
            toError();
        } else if (target == IBV_QPS_RESET) {
            receives.clear();
            sendQueue.clear();
            state = IBV_QPS_RESET;
        } else {
            state = target;
        }
        return 0;
    }

    /** ibv_destroy_qp (under the network's exclusive memory lock): no completion is produced any more. */
    void destroy() {
        destroyed = true;
        sendQueue.clear();
        synchronized (this) {
            receives.clear();
        }
    }

    /** Moves to ERR: posted receives flush now, queued sends as the worker reaches them. */
    void toError() {
        List<PostedReceive> flushed;
        synchronized (this) {
            if (state == IBV_QPS_ERR || destroyed) {
                return;
            }
            state = IBV_QPS_ERR;
            flushed = new ArrayList<>(receives);
            receives.clear();
        }
        flushed.forEach(this::flushReceive);
        schedule();
    }

    private void flushReceive(PostedReceive r) {
        recvCq.add(new SoftCompletionQueue.Entry(r.wrId(), Verbs.IBV_WC_WR_FLUSH_ERR, Verbs.IBV_WC_RECV, 0, qpNum, 0, 0));
    }

    private synchronized PostedReceive takeReceive() {
        return responsive() ? receives.poll() : null;
    }

    // ------------------------------------------------------------------ requester worker

    private void schedule() {
        if (draining.compareAndSet(false, true)) {
            Thread.ofVirtual().name("soft-rnic-qp-0x" + Integer.toHexString(qpNum)).start(this::drain);
        }
    }

    private void drain() {
        do {
            PostedSend wr;
            while ((wr = sendQueue.poll()) != null) {
                try {
                    execute(wr);
                } catch (Throwable t) {
                    device.recordFailure(t);
                    complete(wr, Verbs.IBV_WC_GENERAL_ERR, 0);
                    toError();
                }
            }
            draining.set(false);
        } while (!sendQueue.isEmpty() && draining.compareAndSet(false, true));
    }

    private void execute(PostedSend wr) {
        if (destroyed) {
            return;
        }
        if (state == IBV_QPS_ERR) {
            complete(wr, Verbs.IBV_WC_WR_FLUSH_ERR, 0);
            return;
        }
        int status = perform(wr);
        if (status == IBV_WC_SUCCESS) {
            if (wr.signaled()) {
                complete(wr, IBV_WC_SUCCESS, lengthOf(wr));
            }
        } else {
            complete(wr, status, 0);
            if (status != Verbs.IBV_WC_WR_FLUSH_ERR) {
                toError();
            }
        }
    }

    private void complete(PostedSend wr, int status, int byteLength) {
        sendCq.add(new SoftCompletionQueue.Entry(wr.wrId(), status, FakeVerbsDevice.completionOpcode(wr.opcode()),
                byteLength, qpNum, 0, 0));
    }

    private static int lengthOf(PostedSend wr) {
        return wr.sges().isEmpty() ? 0 : wr.sges().getFirst().length();
    }

    /** Executes one request; returns its IBV_WC_* status. */
    private int perform(PostedSend wr) {
        if (wr.sges().size() > 1) {
            return Verbs.IBV_WC_LOC_QP_OP_ERR; // QPs of this device are created with one SGE
        }
        int opcode = wr.opcode();
        int length = remoteLength(wr);
        boolean oneSided = opcode != Verbs.IBV_WR_SEND;
        if (opcode != Verbs.IBV_WR_RDMA_WRITE && opcode != Verbs.IBV_WR_RDMA_WRITE_WITH_IMM && opcode != Verbs.IBV_WR_SEND
                && opcode != Verbs.IBV_WR_RDMA_READ && !wr.isAtomic() && !isAtomicWrite(wr)) {
            return Verbs.IBV_WC_LOC_QP_OP_ERR;
        }
        if (isAtomicWrite(wr) && !wr.sges().isEmpty()) {
            return Verbs.IBV_WC_LOC_QP_OP_ERR; // the value travels in the request (wr_atomic_write), not in an SGE
        }
        if (wr.isAtomic() && length != WORD_LENGTH) {
            return Verbs.IBV_WC_LOC_QP_OP_ERR;
        }
        boolean localWrite = opcode == Verbs.IBV_WR_RDMA_READ || wr.isAtomic();
        int local = device.network().withMemory(() -> localRegion(wr, localWrite) == null && lengthOf(wr) > 0
                ? Verbs.IBV_WC_LOC_PROT_ERR : IBV_WC_SUCCESS);
        if (local != IBV_WC_SUCCESS) {
            return local;
        }
        SoftQueuePair peer = device.network().queuePair(dlid, destQpNum);
        if (peer == null || !peer.responsive()) {
            return Verbs.IBV_WC_RETRY_EXC_ERR;
        }
        long delay = 0;
        if (oneSided) {
            int remote = device.network().withMemory(() -> peer.checkRemote(wr, length));
            if (remote != IBV_WC_SUCCESS) {
                peer.toError();
                return remote;
            }
            if (opcode != Verbs.IBV_WR_RDMA_READ) {
                SoftMemoryRegion target = peer.device.regionByRkey(wr.rkey());
                delay = target == null ? 0 : target.writeDelayNanos(length);
            }
        }
        PostedReceive receive = null;
        if (opcode == Verbs.IBV_WR_SEND || opcode == Verbs.IBV_WR_RDMA_WRITE_WITH_IMM) {
            Rnr rnr = awaitReceive(peer);
            if (rnr.status() != IBV_WC_SUCCESS) {
                return rnr.status();
            }
            receive = rnr.receive();
        }
        int waited = pause(delay, peer);
        if (waited != IBV_WC_SUCCESS) {
            return waited;
        }
        PostedReceive consumed = receive;
        return device.network().withMemory(() -> transfer(wr, length, peer, consumed));
    }

    private static final int WORD_LENGTH = 8;

    private static boolean isAtomicWrite(PostedSend wr) {
        return wr.opcode() == Verbs.IBV_WR_ATOMIC_WRITE;
    }

    /** Bytes touched at the target: the SGE's, or the word of an ATOMIC_WRITE. */
    private static int remoteLength(PostedSend wr) {
        return isAtomicWrite(wr) ? WORD_LENGTH : lengthOf(wr);
    }

    private SoftMemoryRegion localRegion(PostedSend wr, boolean needWrite) {
        if (wr.sges().isEmpty()) {
            return null;
        }
        PostedSend.Sge sge = wr.sges().getFirst();
        SoftMemoryRegion mr = device.regionByLkey(sge.lkey());
        if (mr == null || mr.offsetOf(sge.address(), sge.length()) < 0 || (needWrite && !mr.allowsLocalWrite())) {
            return null;
        }
        return mr;
    }

    /** Responder side of a one-sided request: rkey, range, region and QP access flags, atomic alignment. */
    private int checkRemote(PostedSend wr, int length) {
        SoftMemoryRegion mr = device.regionByRkey(wr.rkey());
        if (mr == null || mr.offsetOf(wr.remoteAddress(), length) < 0) {
            return Verbs.IBV_WC_REM_ACCESS_ERR;
        }
        int needed = switch (wr.opcode()) {
            case Verbs.IBV_WR_RDMA_READ -> Verbs.IBV_ACCESS_REMOTE_READ;
            case Verbs.IBV_WR_RDMA_WRITE, Verbs.IBV_WR_RDMA_WRITE_WITH_IMM, Verbs.IBV_WR_ATOMIC_WRITE ->
                    Verbs.IBV_ACCESS_REMOTE_WRITE;
            default -> Verbs.IBV_ACCESS_REMOTE_ATOMIC;
        };
        if (!mr.allows(needed) || (accessFlags & needed) == 0) {
            return Verbs.IBV_WC_REM_ACCESS_ERR;
        }
        if ((wr.isAtomic() || isAtomicWrite(wr)) && (wr.remoteAddress() & (WORD_LENGTH - 1)) != 0) {
            return Verbs.IBV_WC_REM_INV_REQ_ERR;
        }
        return IBV_WC_SUCCESS;
    }

    private record Rnr(PostedReceive receive, int status) {}

    /** Receiver-not-ready retries: every peer min_rnr_timer, rnr_retry times (7: forever). */
    private Rnr awaitReceive(SoftQueuePair peer) {
        long timer = RnrTimer.nanos(peer.minRnrTimer);
        int retries = rnrRetry;
        for (int attempt = 0; ; attempt++) {
            PostedReceive receive = peer.takeReceive();
            if (receive != null) {
                return new Rnr(receive, IBV_WC_SUCCESS);
            }
            if (retries != RnrTimer.RETRY_FOREVER && attempt >= retries) {
                return new Rnr(null, Verbs.IBV_WC_RNR_RETRY_EXC_ERR);
            }
            int waited = pause(timer, peer);
            if (waited != IBV_WC_SUCCESS) {
                return new Rnr(null, waited);
            }
        }
    }

    /** Waits {@code nanos}, cut short by this QP leaving RTS (flush) or the peer going away (retry exceeded). */
    private int pause(long nanos, SoftQueuePair peer) {
        long deadline = System.nanoTime() + nanos;
        while (true) {
            if (broken()) {
                return Verbs.IBV_WC_WR_FLUSH_ERR;
            }
            if (!peer.responsive()) {
                return Verbs.IBV_WC_RETRY_EXC_ERR;
            }
            long left = deadline - System.nanoTime();
            if (left <= 0) {
                return IBV_WC_SUCCESS;
            }
            LockSupport.parkNanos(this, Math.min(left, MAX_SLICE_NANOS));
        }
    }

    /** Moves the bytes, under the network's memory lock, after looking every key up again. */
    private int transfer(PostedSend wr, int length, SoftQueuePair peer, PostedReceive receive) {
        if (broken()) {
            return Verbs.IBV_WC_WR_FLUSH_ERR;
        }
        if (peer.destroyed) {
            return Verbs.IBV_WC_RETRY_EXC_ERR;
        }
        int opcode = wr.opcode();
        SoftMemoryRegion local = localRegion(wr, opcode == Verbs.IBV_WR_RDMA_READ || wr.isAtomic());
        if (local == null && lengthOf(wr) > 0) {
            return Verbs.IBV_WC_LOC_PROT_ERR;
        }
        long localOffset = local == null ? 0 : local.offsetOf(wr.sges().getFirst().address(), length);
        if (opcode == Verbs.IBV_WR_SEND) {
            return peer.deliver(receive, local, localOffset, length);
        }
        int remoteCheck = peer.checkRemote(wr, length);
        if (remoteCheck != IBV_WC_SUCCESS) {
            peer.toError();
            return remoteCheck;
        }
        SoftMemoryRegion remote = peer.device.regionByRkey(wr.rkey());
        long remoteOffset = remote.offsetOf(wr.remoteAddress(), length);
        switch (opcode) {
            case Verbs.IBV_WR_RDMA_READ -> MemorySegment.copy(remote.memory, remoteOffset, local.memory, localOffset, length);
            case Verbs.IBV_WR_RDMA_WRITE -> {
                copyIfAny(local, localOffset, remote, remoteOffset, length);
                remote.mirror(remoteOffset, length);
            }
            case Verbs.IBV_WR_RDMA_WRITE_WITH_IMM -> {
                copyIfAny(local, localOffset, remote, remoteOffset, length);
                remote.mirror(remoteOffset, length);
                peer.recvCq.add(new SoftCompletionQueue.Entry(receive.wrId(), IBV_WC_SUCCESS,
                        Verbs.IBV_WC_RECV_RDMA_WITH_IMM, length, peer.qpNum, Integer.reverseBytes(wr.immediate()),
                        Verbs.IBV_WC_WITH_IMM));
            }
            case Verbs.IBV_WR_ATOMIC_WRITE -> {
                WORD.setVolatile(remote.memory, remoteOffset, wr.swap());
                remote.mirror(remoteOffset, WORD_LENGTH);
            }
            case Verbs.IBV_WR_ATOMIC_CMP_AND_SWP -> {
                long old = (long) WORD.compareAndExchange(remote.memory, remoteOffset, wr.compareAdd(), wr.swap());
                local.memory.set(ValueLayout.JAVA_LONG_UNALIGNED, localOffset, old);
                if (old == wr.compareAdd()) {
                    remote.mirror(remoteOffset, WORD_LENGTH);
                }
            }
            default -> {
                local.memory.set(ValueLayout.JAVA_LONG_UNALIGNED, localOffset,
                        (long) WORD.getAndAdd(remote.memory, remoteOffset, wr.compareAdd()));
                remote.mirror(remoteOffset, WORD_LENGTH);
            }
        }
        return IBV_WC_SUCCESS;
    }

    private static void copyIfAny(SoftMemoryRegion from, long fromOffset, SoftMemoryRegion to, long toOffset, int length) {
        if (length > 0) {
            MemorySegment.copy(from.memory, fromOffset, to.memory, toOffset, length);
        }
    }

    /** Responder side of a SEND: the receive's buffer must hold the message and be locally writable. */
    private int deliver(PostedReceive receive, SoftMemoryRegion source, long sourceOffset, int length) {
        List<PostedSend.Sge> sges = receive.sges();
        int capacity = sges.isEmpty() ? 0 : sges.getFirst().length();
        if (length > capacity) {
            recvCq.add(new SoftCompletionQueue.Entry(receive.wrId(), Verbs.IBV_WC_LOC_LEN_ERR, Verbs.IBV_WC_RECV, 0, qpNum, 0, 0));
            toError();
            return Verbs.IBV_WC_REM_INV_REQ_ERR;
        }
        if (length > 0) {
            PostedSend.Sge sge = sges.getFirst();
            SoftMemoryRegion mr = device.regionByLkey(sge.lkey());
            long offset = mr == null || !mr.allowsLocalWrite() ? -1 : mr.offsetOf(sge.address(), length);
            if (offset < 0) {
                recvCq.add(new SoftCompletionQueue.Entry(receive.wrId(), Verbs.IBV_WC_LOC_PROT_ERR, Verbs.IBV_WC_RECV, 0, qpNum, 0, 0));
                toError();
                return Verbs.IBV_WC_REM_OP_ERR;
            }
            MemorySegment.copy(source.memory, sourceOffset, mr.memory, offset, length);
        }
        recvCq.add(new SoftCompletionQueue.Entry(receive.wrId(), IBV_WC_SUCCESS, Verbs.IBV_WC_RECV, length, qpNum, 0, 0));
        return IBV_WC_SUCCESS;
    }
}
