package io.erda.fabric.verbs;

import io.erda.fabric.AbstractEndpoint;
import io.erda.fabric.Completion;
import io.erda.fabric.EndpointOptions;
import io.erda.fabric.Fabric;
import io.erda.fabric.FabricCapabilities;
import io.erda.fabric.FabricException;
import io.erda.fabric.MemoryRegion;
import io.erda.fabric.Opcode;
import io.erda.fabric.RecvRequest;
import io.erda.fabric.Status;
import io.erda.fabric.WorkRequest;
import io.erda.ffm.verbs.ConnectionParameters;
import io.erda.ffm.verbs.QpInfo;
import io.erda.ffm.verbs.QpInfoExchange;
import io.erda.ffm.verbs.QueuePair;
import io.erda.ffm.verbs.QueuePairEx;
import io.erda.ffm.verbs.ReceiveRequestWriter;
import io.erda.ffm.verbs.Verbs;
import io.erda.ffm.verbs.VerbsException;
import io.erda.ffm.verbs.WorkCompletions;
import io.erda.ffm.verbs.WorkRequestWriter;
import java.io.Closeable;
import java.io.IOException;
import java.io.InputStream;
import java.lang.foreign.Arena;
import java.net.InetSocketAddress;
import java.net.URI;
import java.nio.ByteBuffer;
import java.nio.channels.SocketChannel;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.atomic.AtomicLong;

/**
 * An RC queue pair with its connection manager: the TCP side channel described here, or rdma_cm
 * ({@code verbs.cm=rdmacm}, see {@link CmConnection}), which carries the same information in CM messages and
 * reports a broken connection as DISCONNECTED instead of end-of-file.
 *
 * <h2>Set-up</h2>
 * The QP is created and moved to INIT at once, so receives can be posted before connecting. The client opens a TCP
 * connection to the listener and sends its {@link QpInfo} (qp_num, lid, gid, psn) with a {@link ConnectMessage}
 * (its private data and RNR timer) as private data; the listener's owner accepts: the server's QP goes to RTR
 * towards the client, then RTS, and its QpInfo goes back; the client does RTR and RTS and answers with one READY
 * byte, and only then does accept return, so neither side sends to a QP that is not yet ready to receive.
 *
 * <h2>Work requests</h2>
 * The wr_id of every native request is the endpoint's posting sequence number (receives: with the top bit set),
 * which indexes a ring of the posted requests: it gives back the caller's wrId and opcode (a FLUSH posted as a READ
 * completes as FLUSH), tells which completions the caller did not ask for, and counts what is outstanding. An RC
 * send queue completes in order, so a completion for sequence s retires every request before s as well; the
 * provider signals one request in every maxSendWr/2 itself so that unsignalled streams retire too (the usual
 * selective-signalling rule), and hides those completions.
 *
 * <h2>Errors and broken connections</h2>
 * An error completion, {@link #abort()}, {@link #close()} or the side channel reaching end-of-file (the peer
 * process died, aborted or closed) moves the QP to ERR, so every outstanding and later request completes with
 * IBV_WC_WR_FLUSH_ERR, and closes the side channel, which is how the peer learns it must do the same. The RNIC's
 * own detection (IBV_WC_RETRY_EXC_ERR after timeout x retry_cnt) stays as the backstop when the TCP connection
 * outlives the peer's NIC.
 */
final class VerbsEndpoint extends AbstractEndpoint<VerbsFabric, VerbsCompletionQueue> {
    static final long RECEIVE_BIT = 1L << 63;
    private static final int READY = 0x52; // 'R'
    private static final int READY_TIMEOUT_MILLIS = 10_000;

    private record Posted(WorkRequest request, boolean report) {}

    private final QueuePair qp;
    /** Read once: ibv_qp's qp_num field is freed with the QP, and the fabric looks endpoints up by it after that. */
    private final int qpNum;
    private final boolean ownsSendQueue;
    private final boolean ownsRecvQueue;
    private final int maxSendWr;
    private final int maxRecvWr;
    private final RnrSetting rnr;
    private final int psn = ThreadLocalRandom.current().nextInt() & QpInfo.PSN_MASK;
    private final Arena arena = Arena.ofShared();

    private final Object sendLock = new Object();
    private final WorkRequestWriter sendWriter;
    private final Posted[] sendRing;
    private long sendPosted;   // guarded by sendLock
    private long lastSignaled; // guarded by sendLock
    private volatile long sendRetired;
    /** Reported send completions translated from the CQ but not yet polled by the caller: they hold their slot. */
    private final AtomicLong unpolled = new AtomicLong();

    private final Object recvLock = new Object();
    private final ReceiveRequestWriter recvWriter;
    private final RecvRequest[] recvRing;
    private long recvPosted;   // guarded by recvLock
    private volatile long recvRetired;

    /** The side channel or rdma_cm connection; closing it tells the peer the connection is broken. */
    private volatile Closeable link;
    /** Guards the QP's state transitions (connection set-up, ERR) against {@link #destroy}. */
    private final Object qpLock = new Object();
    /**
     * The QP is gone (ibv_destroy_qp freed it): written holding sendLock, recvLock and qpLock, read holding any of
     * them, so no post, receive or transition can reach a freed QP, whichever thread breaks or closes what.
     */
    private boolean destroyed;

    VerbsEndpoint(VerbsFabric fabric, QueuePair qp, VerbsCompletionQueue sendQueue, VerbsCompletionQueue recvQueue,
                  EndpointOptions options) {
        super(fabric, sendQueue, recvQueue);
        this.qp = qp;
        this.qpNum = qp.qpNum();
        this.ownsSendQueue = options.sendQueue() == null;
        this.ownsRecvQueue = options.recvQueue() == null;
        this.maxSendWr = options.maxSendWr();
        this.maxRecvWr = options.maxRecvWr();
        this.rnr = RnrSetting.of(options.rnrTimeout());
        this.sendWriter = new WorkRequestWriter(arena, 1);
        this.recvWriter = new ReceiveRequestWriter(arena, 1);
        this.sendRing = new Posted[maxSendWr];
        this.recvRing = new RecvRequest[maxRecvWr];
        qp.modifyToInit(fabric.connectionParameters(0, 0));
    }

    /** sendLock: tryPost reads the state under it, so no request reaches a QP that is not yet open, or is closed. */
    @Override
    protected Object lock() {
        return sendLock;
    }

    int qpNum() {
        return qpNum;
    }

    /**
     * Runs a native call on the QP ({@code what} names it in the error) unless the QP is destroyed: rdma_cm's
     * transitions, from a connecting thread while the fabric may be closing.
     */
    void onQueuePair(String what, java.util.function.Consumer<QueuePair> call) {
        synchronized (qpLock) {
            if (destroyed) {
                throw new FabricException(what + ": the endpoint is closed (its queue pair is destroyed)");
            }
            call.accept(qp);
        }
    }

    RnrSetting rnr() {
        return rnr;
    }

    // ------------------------------------------------------------------ connection set-up

    @Override
    public void connect(URI uri, byte[] privateData) throws FabricException {
        if (privateData.length > Fabric.MAX_PRIVATE_DATA) {
            throw new FabricException("private data of " + privateData.length + " bytes exceeds the limit of "
                    + Fabric.MAX_PRIVATE_DATA);
        }
        if (uri.getHost() == null || uri.getPort() < 0) {
            throw new FabricException("verbs URI " + uri + " needs host:port");
        }
        beginConnecting();
        CmEventChannel events = fabric().cmEvents();
        if (events != null) {
            CmConnection connection = new CmConnection(events);
            try {
                byte[] reply = connection.connect(fabric(), this, uri, privateData);
                connected(connection, uri, reply);
            } catch (RuntimeException e) {
                setUpFailed();
                throw e;
            }
            return;
        }
        SocketChannel channel = null;
        try {
            channel = SocketChannel.open(new InetSocketAddress(uri.getHost(), uri.getPort()));
            QpInfoExchange.write(channel, localInfo(new ConnectMessage(ConnectMessage.REQUEST, rnr.timerCode(), privateData)));
            QpInfo remote = QpInfoExchange.read(channel);
            ConnectMessage reply = ConnectMessage.decode(remote.privateData(), ConnectMessage.ACCEPT);
            if (reply.kind() == ConnectMessage.REJECT) {
                throw new FabricException("connection to " + uri + " rejected: " + reply.reason());
            }
            bringUp(remote, reply.rnrTimerCode());
            channel.write(ByteBuffer.wrap(new byte[] {READY}));
            connected(channel, uri, reply.payload());
        } catch (IOException | VerbsException | FabricException e) {
            closeQuietly(channel);
            setUpFailed();
            throw e instanceof FabricException f ? f : new FabricException("connecting to " + uri + " failed: " + e.getMessage(), e);
        }
    }

    /** The server half over rdma_cm, run by {@link RdmaCmConnectionRequest#accept}. */
    void accept(CmConnection connection, CmPrivateData request, URI peerUri, byte[] replyPrivateData) {
        checkReplyLength(replyPrivateData);
        beginConnecting();
        try {
            connectingTo(peerUri);
            connection.accept(fabric(), this, request, peerUri, replyPrivateData, this::open);
        } catch (RuntimeException e) {
            enterError();
            throw e;
        }
        connected(connection, peerUri, request.payload());
    }

    private static void checkReplyLength(byte[] replyPrivateData) {
        if (replyPrivateData.length > Fabric.MAX_PRIVATE_DATA) {
            throw new FabricException("private data of " + replyPrivateData.length + " bytes exceeds the limit of "
                    + Fabric.MAX_PRIVATE_DATA);
        }
    }

    /** The server half, run by {@link VerbsConnectionRequest#accept}. */
    void accept(SocketChannel channel, QpInfo remote, ConnectMessage request, URI peerUri, byte[] replyPrivateData) {
        checkReplyLength(replyPrivateData);
        beginConnecting();
        try {
            bringUp(remote, request.rnrTimerCode());
            connectingTo(peerUri); // named in anything that fails from now on
            open(); // before the answer: the peer may send as soon as it has it, before write() returns here
            QpInfoExchange.write(channel, localInfo(new ConnectMessage(ConnectMessage.ACCEPT, rnr.timerCode(), replyPrivateData)));
            channel.socket().setSoTimeout(READY_TIMEOUT_MILLIS);
            InputStream in = channel.socket().getInputStream();
            int ready = in.read();
            if (ready != READY) {
                throw new FabricException("peer " + peerUri + " did not confirm the connection (got " + ready + ")");
            }
            channel.socket().setSoTimeout(0);
            connected(channel, peerUri, request.payload());
        } catch (IOException | VerbsException | FabricException e) {
            closeQuietly(channel);
            enterError();
            throw e instanceof FabricException f ? f : new FabricException("accepting " + peerUri + " failed: " + e.getMessage(), e);
        }
    }

    private QpInfo localInfo(ConnectMessage message) {
        return qp.localInfo(fabric().context(), fabric().connectionParameters(0, 0), psn, message.encode());
    }

    /** INIT → RTR towards the peer (with the RNR timer it asked for) → RTS (with our RNR retry count). */
    private void bringUp(QpInfo remote, int peerRnrTimerCode) {
        ConnectionParameters parameters = fabric().connectionParameters(peerRnrTimerCode, rnr.retry());
        onQueuePair("bringing the queue pair up", q -> {
            q.modifyToRtr(parameters, remote);
            q.modifyToRts(parameters, psn);
        });
    }

    private void connected(SocketChannel channel, URI peerUri, byte[] peerData) {
        connected((Closeable) channel, peerUri, peerData);
        Thread.ofVirtual().name("verbs-side-channel-0x" + Integer.toHexString(qpNum())).start(() -> watch(channel));
    }

    /** rdma_cm tells its connection to break the endpoint when the peer disconnects (or already has). */
    private void connected(CmConnection connection, URI peerUri, byte[] peerData) {
        connected((Closeable) connection, peerUri, peerData);
        if (!connection.attach(this)) {
            enterError();
        }
    }

    /**
     * The connection manager's last step is done (the peer's READY byte, rdma_cm's ESTABLISHED). The active side
     * opens here; the passive side opened once its QP was in RTS, before its answer went out, and if a step after
     * that fails it goes to ERR like any broken connection.
     */
    private void connected(Closeable connectionLink, URI peerUri, byte[] peerData) {
        link = connectionLink;
        established(peerUri, peerData);
    }

    /** Blocks (a parked virtual thread, no CPU) until the peer closes the side channel, then breaks the connection. */
    private void watch(SocketChannel channel) {
        ByteBuffer sink = ByteBuffer.allocate(64);
        String why;
        try {
            while (channel.read(sink.clear()) >= 0) {
                // nothing is sent after READY; bytes would be ignored
            }
            why = Completion.PEER_CLOSED + " (end of its side channel " + peer() + ")";
        } catch (IOException e) {
            // closed here (enterError, close: then the reason is already recorded) or reset by the peer
            why = "the side channel to " + peer() + " failed: " + e;
        }
        enterError(why);
    }

    // ------------------------------------------------------------------ posting

    /**
     * Posts one request. A request holds its send-queue slot until the RNIC has completed it and, if it reports a
     * completion, until that completion has been polled (as ibv_post_send's ENOMEM does). Requests that report
     * nothing (unsignalled successes, the provider's own signals) are retired by whoever polls the send CQ; when the
     * queue looks full, post polls it once itself, so a caller that never waits on its send queue (unsignalled
     * SENDs answered through the receive queue) does not fill it.
     */
    @Override
    public void post(WorkRequest request) throws FabricException {
        if (!tryPost(request)) {
            sendQueue().progress();
            if (!tryPost(request)) {
                throw new FabricException("send queue full: " + outstanding() + " of " + maxSendWr
                        + " work requests outstanding (completed requests hold their slot until polled)");
            }
        }
    }

    /** Requests in the send queue: not yet completed by the RNIC, or completed and not yet polled. */
    private long outstanding() {
        return sendPosted - sendRetired + unpolled.get();
    }

    /** False when the send queue is full; polling its CQ without sendLock held may retire requests. */
    private boolean tryPost(WorkRequest request) {
        synchronized (sendLock) {
            State s = state();
            if (s == State.CLOSED || destroyed) {
                throw new FabricException("endpoint is closed");
            }
            if (outstanding() >= maxSendWr) {
                return false;
            }
            QueuePairEx extended = qp.extended();
            if (request.opcode() == Opcode.ATOMIC_WRITE && (extended == null || !extended.hasAtomicWrite())) {
                throw new FabricException(fabric().atomicWriteRefusal());
            }
            if ((request.opcode() == Opcode.CAS || request.opcode() == Opcode.FETCH_ADD)
                    && fabric().capabilities().atomicity() == FabricCapabilities.Atomicity.NONE) {
                throw new FabricException(fabric().capabilities().missing(request.opcode().toString(),
                        "remote atomics (atomic_cap is ATOMIC_NONE)"));
            }
            if (s == State.IDLE || s == State.CONNECTING) {
                sendQueue().deliver(Completion.error(request.wrId(), request.opcode(), Status.WR_FLUSH_ERROR, this,
                        "endpoint is " + s + ": not connected"));
                return true;
            }
            long seq = sendPosted;
            boolean signal = request.signaled() || seq - lastSignaled >= Math.max(1, maxSendWr / 2);
            sendRing[(int) (seq % maxSendWr)] = new Posted(request, request.signaled());
            try {
                if (request.opcode() == Opcode.ATOMIC_WRITE
                        || (request.opcode() == Opcode.FLUSH && extended != null && extended.hasFlush())) {
                    postExtended(extended, seq, request, signal);
                    fabric().posted.count(request.opcode());
                } else {
                    sendWriter.reset();
                    append(seq, request);
                    if (signal) {
                        sendWriter.signaled();
                    }
                    qp.postSend(sendWriter);
                    fabric().posted.count(request.opcode() == Opcode.FLUSH ? Opcode.READ : request.opcode());
                }
                if (signal) {
                    lastSignaled = seq;
                }
            } catch (VerbsException e) {
                throw new FabricException("posting " + request.opcode() + " wr " + request.wrId() + " failed: "
                        + e.getMessage(), e);
            }
            sendPosted = seq + 1;
            return true;
        }
    }

    private void append(long seq, WorkRequest r) {
        MemoryRegion local = r.local();
        long localAddress = local == null ? 0 : local.address() + r.localOffset();
        int lkey = local == null ? 0 : local.lkey();
        switch (r.opcode()) {
            case READ -> sendWriter.read(seq, localAddress, r.length(), lkey, r.remoteAddress(), r.rkey());
            case WRITE -> sendWriter.write(seq, localAddress, r.length(), lkey, r.remoteAddress(), r.rkey());
            case WRITE_WITH_IMM -> sendWriter.writeWithImmediate(seq, localAddress, r.length(), lkey, r.remoteAddress(),
                    r.rkey(), r.immData());
            case SEND -> sendWriter.send(seq, localAddress, r.length(), lkey);
            case CAS -> sendWriter.compareAndSwap(seq, localAddress, lkey, r.remoteAddress(), r.rkey(), r.compareAdd(), r.swap());
            case FETCH_ADD -> sendWriter.fetchAdd(seq, localAddress, lkey, r.remoteAddress(), r.rkey(), r.compareAdd());
            case FLUSH -> {
                // Emulated (no native IBV_WR_FLUSH, see postExtended): a READ on the same QP cannot complete before every earlier
                // WRITE has been placed at the target, so its completion is the flush's. A few bytes of the range
                // suffice, into the fabric's scratch buffer (librpma's "APM" does the same with 8 bytes).
                MemoryRegion scratch = fabric().flushScratch();
                int length = Math.min(r.length(), VerbsFabric.FLUSH_READ_LENGTH);
                sendWriter.read(seq, scratch.address(), length, scratch.lkey(), r.remoteAddress(), r.rkey());
            }
            default -> throw new IllegalArgumentException(r.opcode() + " cannot be posted");
        }
    }

    /**
     * ATOMIC_WRITE and native FLUSH through the QP's ibv_qp_ex: a one-request wr_start/wr_complete batch. The rest
     * keeps ibv_post_send (one ibv_send_wr, no per-op downcalls); both go down the same send queue under sendLock,
     * never interleaved within a batch.
     */
    private static void postExtended(QueuePairEx ex, long seq, WorkRequest r, boolean signal) {
        ex.start();
        try {
            ex.next(seq, signal ? Verbs.IBV_SEND_SIGNALED : 0);
            if (r.opcode() == Opcode.ATOMIC_WRITE) {
                ex.atomicWrite(r.rkey(), r.remoteAddress(), r.swap());
            } else {
                ex.flush(r.rkey(), r.remoteAddress(), r.length(), Verbs.ERDA_FLUSH_PERSISTENT, Verbs.ERDA_FLUSH_RANGE);
            }
        } catch (RuntimeException e) {
            ex.abort();
            throw e;
        }
        ex.complete();
    }

    @Override
    public void postRecv(RecvRequest request) throws FabricException {
        synchronized (recvLock) {
            // the state changes under sendLock, not here: destroyed (written holding recvLock too) is what
            // keeps a receive from reaching a QP that a close on another thread has just destroyed
            if (state() == State.CLOSED || destroyed) {
                throw new FabricException("endpoint is closed");
            }
            if (recvPosted - recvRetired >= maxRecvWr) {
                throw new FabricException("receive queue full: " + (recvPosted - recvRetired) + " of " + maxRecvWr
                        + " receives posted");
            }
            long seq = recvPosted;
            recvRing[(int) (seq % maxRecvWr)] = request;
            recvWriter.reset().receive(seq | RECEIVE_BIT, request.local().address() + request.localOffset(),
                    request.length(), request.local().lkey());
            try {
                qp.postRecv(recvWriter);
            } catch (VerbsException e) {
                throw new FabricException("posting receive wr " + request.wrId() + " failed: " + e.getMessage(), e);
            }
            recvPosted = seq + 1;
        }
    }

    /** The QP's extended send API (ibv_qp_ex), null for a classic QP: which ops this endpoint posts natively. */
    QueuePairEx extendedOps() {
        return qp.extended();
    }

    // ------------------------------------------------------------------ completions

    /** Translates entry {@code i} of a polled batch; null for a completion the caller did not ask for. */
    Completion completed(WorkCompletions wc, int i) {
        long id = wc.wrId(i);
        int wcStatus = wc.status(i);
        Status status = WcStatus.status(wcStatus);
        Completion completion;
        if ((id & RECEIVE_BIT) != 0) {
            long seq = id & ~RECEIVE_BIT;
            RecvRequest r = recvRing[(int) (seq % maxRecvWr)];
            recvRetired = seq + 1;
            completion = status == Status.SUCCESS
                    ? new Completion(r.wrId(), WcStatus.receiveOpcode(wc.opcode(i)), status, wc.byteLength(i),
                            wc.hasImmediate(i) ? wc.immediate(i) : 0, wc.hasImmediate(i), this, null)
                    : Completion.error(r.wrId(), Opcode.RECV, status, this, describe(wcStatus, wc, i, null));
        } else {
            Posted p = sendRing[(int) (id % maxSendWr)];
            sendRetired = id + 1;
            WorkRequest r = p.request();
            if (status == Status.SUCCESS) {
                completion = p.report() ? Completion.success(r.wrId(), r.opcode(), r.length(), this) : null;
            } else {
                completion = Completion.error(r.wrId(), r.opcode(), status, this, describe(wcStatus, wc, i, r));
            }
            if (completion != null) {
                unpolled.incrementAndGet();
            }
        }
        if (status != Status.SUCCESS) {
            enterError(WcStatus.name(wcStatus) + " completion");
        }
        // drained() takes the endpoint's locks under the CQ's monitor, as toError does; only for a closed endpoint
        if (state() == State.CLOSED && drained()) {
            fabric().drainedAfterClose(this); // its QP lingered for this completion: the fabric destroys it now
        }
        return completion;
    }

    private String describe(int wcStatus, WorkCompletions wc, int i, WorkRequest r) {
        String what = r == null ? "receive" : r.opcode() + " of " + r.length() + " bytes"
                + (r.opcode() == Opcode.SEND ? "" : " at 0x" + Long.toHexString(r.remoteAddress()) + " rkey 0x"
                + Integer.toHexString(r.rkey()));
        String why = brokenBecause();
        return WcStatus.name(wcStatus) + ", vendor_err 0x" + Integer.toHexString(wc.vendorError(i)) + ": " + what
                + (wcStatus != Verbs.IBV_WC_WR_FLUSH_ERR ? ""
                        : why != null ? " (connection broken: " + why + ")"
                        // the RNIC moved the QP to ERR with no error completion here: an RC responder does that when
                        // the peer's READ, WRITE or atomic broke the rules (bad rkey, out of bounds, misaligned)
                        : " (connection broken by the RNIC: the QP entered ERR without an error completion on this"
                                + " side, as a responder does on the peer's invalid READ/WRITE/atomic)");
    }

    /** The caller polled a send completion that {@link #completed} translated: its slot is free. */
    void handedOut() {
        unpolled.decrementAndGet();
    }

    /** Whether this endpoint's QP reports to {@code queue}. */
    boolean uses(VerbsCompletionQueue queue) {
        return sendQueue() == queue || recvQueue() == queue;
    }

    /** True when every posted request has been polled: the QP can be destroyed without losing completions. */
    boolean drained() {
        synchronized (sendLock) {
            synchronized (recvLock) {
                return sendRetired == sendPosted && recvRetired == recvPosted;
            }
        }
    }

    // ------------------------------------------------------------------ breaking

    /** ERR: the QP flushes, the side channel closes (rdma_cm: disconnects) so the peer does the same. Idempotent. */
    void enterError() {
        enterError("connection set-up failed or the CM reported the connection gone");
    }

    /** ERR with the reason, which every later flushed completion names (what broke a connection, for its owner). */
    void enterError(String why) {
        if (toError(why)) {
            breakQueuePair();
        }
    }

    private void breakQueuePair() {
        synchronized (qpLock) { // a watcher or poller breaks it while the owner closes and destroys it
            try {
                if (!destroyed) {
                    qp.modifyToError();
                }
            } catch (VerbsException e) {
                // already in ERR: the flush happens either way
            }
        }
        closeQuietly(link);
    }

    @Override
    public void abort() {
        enterError("aborted by this side");
    }

    @Override
    public void close() {
        if (!toClosed("closed by this side")) {
            return;
        }
        breakQueuePair();
        fabric().closed(this);
    }

    /**
     * Destroys the QP (and queues it made for itself), once however many threads ask; the fabric calls it when
     * nothing can complete any more. It waits for a post, receive or transition in progress on another thread
     * (breaking on a side channel's end-of-file or an error completion while the owner closes): none can start on
     * the freed QP afterwards.
     */
    void destroy() {
        RuntimeException failure = null;
        synchronized (sendLock) {
            synchronized (recvLock) {
                synchronized (qpLock) {
                    if (destroyed) {
                        return;
                    }
                    destroyed = true;
                    try {
                        qp.close();
                    } catch (RuntimeException e) {
                        failure = e;
                    }
                }
            }
        }
        // outside the locks: closing a queue takes its monitor, which a poller holds while it breaks an endpoint
        try {
            if (ownsSendQueue) {
                sendQueue().ownerDestroyed();
            }
            if (ownsRecvQueue) {
                recvQueue().ownerDestroyed();
            }
            arena.close();
        } finally {
            if (failure != null) {
                throw failure;
            }
        }
    }

    private static void closeQuietly(Closeable channel) {
        if (channel != null) {
            try {
                channel.close();
            } catch (IOException e) {
                // nothing more to do for a side channel that is going away
            }
        }
    }
}
