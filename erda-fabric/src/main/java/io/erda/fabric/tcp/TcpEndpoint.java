package io.erda.fabric.tcp;

import io.erda.fabric.AbstractEndpoint;
import io.erda.fabric.Completion;
import io.erda.fabric.CompletionQueue;
import io.erda.fabric.EndpointOptions;
import io.erda.fabric.Fabric;
import io.erda.fabric.FabricException;
import io.erda.fabric.MemoryRegion;
import io.erda.fabric.Opcode;
import io.erda.fabric.RecvRequest;
import io.erda.fabric.Status;
import io.erda.fabric.WorkRequest;
import io.erda.fabric.emulated.EmulatedCompletionQueue;
import io.erda.fabric.emulated.EmulatedRegion;
import io.erda.fabric.tcp.wire.FrameChannel;
import io.erda.fabric.tcp.wire.FrameHeader;
import io.erda.fabric.tcp.wire.ProtocolViolation;
import io.erda.fabric.tcp.wire.WireOpcode;
import java.io.EOFException;
import java.io.IOException;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.net.InetSocketAddress;
import java.net.SocketTimeoutException;
import java.net.URI;
import java.net.URISyntaxException;
import java.nio.ByteBuffer;
import java.nio.channels.SocketChannel;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.concurrent.LinkedBlockingDeque;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.locks.LockSupport;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.Supplier;

/**
 * An RC queue pair of the tcp provider. A connection is two sockets, one per direction of requests: on the
 * {@code requests} socket this side writes its requests (from the posting thread, in posting order) and its
 * completer thread reads the responses; on the {@code service} socket the {@link Responder} reads the peer's
 * requests and writes the responses. Keeping the directions apart means a responder blocked writing a large READ
 * response can never wait on the other side's responder, so heavy traffic both ways cannot deadlock.
 *
 * <p><b>Connect timeout.</b> {@code connect} as a whole (both TCP connections, then the peer's ACCEPT or REJECT) is
 * bounded by the fabric property {@code connectTimeoutMillis} (default 10 s); past it, it fails naming the address and
 * the timeout, so an unreachable or blackholed address, or a listener that never answers, does not hang the caller.
 *
 * <p><b>Dead peers.</b> TCP alone notices a silently vanished peer late: data it cannot deliver is retransmitted for
 * up to about 15 minutes ({@code tcp_retries2}); keepalive probes only an idle connection (not one with
 * unacknowledged data) and, like TCP itself, is answered by a peer's kernel while the peer process hangs. So liveness
 * is the provider's own: each side sends a HEARTBEAT frame every fifth of the agreed peer timeout on its service
 * socket (from a thread of its own, skipped while the responder is writing there anyway), and a watcher fails the
 * endpoint once neither socket has received a byte, data or heartbeat, for longer than the timeout. The agreed timeout
 * is the smaller of the two sides' {@code peerTimeoutMillis} (default 5 s), exchanged in CONNECT and ACCEPT, so each
 * side's heartbeats are frequent enough for the other. A dead, hung (its whole process: heartbeats come from their own
 * thread) or cut-off peer is thus noticed within the timeout plus one heartbeat interval: the endpoint goes to ERROR,
 * the oldest outstanding request completes with RETRY_EXCEEDED naming the silence and the timeout, everything else
 * with WR_FLUSH_ERROR, and the sockets are reset (the cut-off peer's own watcher fails its side).
 */
final class TcpEndpoint extends AbstractEndpoint<TcpFabric, EmulatedCompletionQueue> {
    private static final System.Logger LOG = TcpFabric.LOG;

    /** A posted send-side request; {@code localError} set if it failed local checks and was never sent. */
    private record Pending(WorkRequest wr, long seq, Status localError, String detail) { }

    private final EndpointOptions options;
    private final LinkedBlockingDeque<RecvRequest> posted;

    /** Guards state, pending, poisoned and nextSeq; completions of this endpoint are added under it, in order. */
    private final Object lock = new Object();
    private final ArrayDeque<Pending> pending = new ArrayDeque<>();
    private boolean poisoned;
    private long nextSeq = 1;

    /** Serialises writers of the requests socket; taken before {@link #lock}. */
    private final ReentrantLock sendLock = new ReentrantLock();
    private final FrameHeader sendHeader = new FrameHeader();

    private volatile FrameChannel requests;
    private volatile FrameChannel service;
    private volatile Thread responderThread;
    /** Serialises writers of the service socket: the responder and the heartbeat thread. */
    private final ReentrantLock serviceLock = new ReentrantLock();

    TcpEndpoint(TcpFabric fabric, EndpointOptions options) {
        super(fabric, softQueue(options.sendQueue(), options.maxSendWr()),
                softQueue(options.recvQueue(), options.maxRecvWr()));
        this.options = options;
        this.posted = new LinkedBlockingDeque<>(options.maxRecvWr());
    }

    @Override
    protected Object lock() {
        return lock;
    }

    private static EmulatedCompletionQueue softQueue(CompletionQueue given, int depth) {
        if (given == null) {
            return new EmulatedCompletionQueue(depth);
        }
        if (given instanceof EmulatedCompletionQueue soft) {
            return soft;
        }
        throw new FabricException("completion queue " + given + " does not belong to a software fabric");
    }

    // ---------------------------------------------------------------- connection set-up

    @Override
    public void connect(URI uri, byte[] privateData) {
        checkPrivateData(privateData);
        beginConnecting();
        FrameChannel fwd = null;
        FrameChannel rev = null;
        Duration timeout = fabric().settings().connectTimeout();
        long deadline = System.nanoTime() + timeout.toNanos();
        try {
            InetSocketAddress address = new InetSocketAddress(uri.getHost(), uri.getPort());
            fwd = new FrameChannel(openSocket(uri, address, deadline, timeout));
            rev = new FrameChannel(openSocket(uri, address, deadline, timeout));
            long nonce = ThreadLocalRandom.current().nextLong();
            FrameHeader h = new FrameHeader();
            h.reset(WireOpcode.CONNECT).sequence(nonce).compareAdd(options.rnrTimeout().toNanos())
                    .swap(ownPeerTimeoutNanos()).payloadLength(privateData.length);
            fwd.write(h, ByteBuffer.wrap(privateData));
            h.reset(WireOpcode.ATTACH).sequence(nonce);
            rev.write(h, null);
            byte[] reply = awaitAnswer(fwd, rev, h, deadline, () -> timedOut(uri, address, timeout,
                    "no ACCEPT or REJECT"));
            switch (h.opcode()) {
                case WireOpcode.ACCEPT -> start(fwd, rev, h.compareAdd(), h.swap(), reply, uri);
                case WireOpcode.REJECT -> throw new FabricException("connection to " + uri + " rejected: "
                        + new String(reply, java.nio.charset.StandardCharsets.UTF_8));
                default -> throw new ProtocolViolation("expected ACCEPT or REJECT from " + uri + ", got " + h);
            }
        } catch (IOException | RuntimeException e) {
            if (fwd != null) {
                fwd.close();
            }
            if (rev != null) {
                rev.close();
            }
            setUpFailed();
            if (e instanceof FabricException fe) {
                throw fe;
            }
            throw new FabricException("connect to " + uri + " failed: " + e, e);
        }
    }

    /** One of connect's sockets, connected within what is left until {@code deadline}. */
    private static SocketChannel openSocket(URI uri, InetSocketAddress address, long deadline, Duration timeout)
            throws IOException {
        long left = deadline - System.nanoTime();
        if (left <= 0) {
            throw timedOut(uri, address, timeout, "no TCP connection");
        }
        SocketChannel channel = SocketChannel.open();
        try {
            channel.socket().connect(address, (int) Math.max(1, Math.min(Integer.MAX_VALUE, TimeUnit.NANOSECONDS.toMillis(left))));
            return channel;
        } catch (SocketTimeoutException e) {
            channel.close();
            throw timedOut(uri, address, timeout, "no TCP connection");
        } catch (IOException | RuntimeException e) {
            channel.close();
            throw e;
        }
    }

    /**
     * Reads the header of the peer's answer into {@code h} and its payload, closing both sockets if that is not done
     * by {@code deadline} (the blocked read then fails and {@code timedOut} says why).
     */
    private static byte[] awaitAnswer(FrameChannel fwd, FrameChannel rev, FrameHeader h, long deadline,
                                      Supplier<FabricException> timedOut) throws IOException {
        AtomicBoolean done = new AtomicBoolean();
        AtomicBoolean expired = new AtomicBoolean();
        Thread timer = Thread.ofVirtual().name("erda-tcp-connect-timer").start(() -> {
            LockSupport.parkNanos(deadline - System.nanoTime());
            while (!done.get() && System.nanoTime() - deadline < 0) {
                LockSupport.parkNanos(deadline - System.nanoTime());
            }
            if (!done.get()) {
                expired.set(true);
                fwd.close();
                rev.close();
            }
        });
        try {
            fwd.readHeader(h);
            return fwd.readBytes(h.payloadLength());
        } catch (IOException e) {
            if (expired.get()) {
                throw timedOut.get();
            }
            throw e;
        } finally {
            done.set(true);
            LockSupport.unpark(timer);
        }
    }

    private static FabricException timedOut(URI uri, InetSocketAddress address, Duration timeout, String what) {
        return new FabricException("connect to " + uri + " timed out: " + what + " from " + address + " within the connect"
                + " timeout of " + timeout.toMillis() + " ms (tcp fabric property " + TcpSettings.CONNECT_TIMEOUT + ")");
    }

    private long ownPeerTimeoutNanos() {
        return fabric().settings().peerTimeout().toNanos();
    }

    /** Server side: called by the connection request on accept. */
    void acceptFrom(FrameChannel fwd, FrameChannel rev, long peerRnrNanos, long peerTimeoutNanos, byte[] peerData,
                    URI peerUri, byte[] reply) {
        checkPrivateData(reply);
        beginConnecting();
        try {
            FrameHeader h = new FrameHeader();
            h.reset(WireOpcode.ACCEPT).compareAdd(options.rnrTimeout().toNanos()).swap(ownPeerTimeoutNanos())
                    .payloadLength(reply.length);
            fwd.write(h, ByteBuffer.wrap(reply));
        } catch (IOException e) {
            fwd.close();
            rev.close();
            setUpFailed();
            throw new FabricException("accepting " + peerUri + " failed: " + e, e);
        }
        start(rev, fwd, peerRnrNanos, peerTimeoutNanos, peerData, peerUri);
    }

    private static void checkPrivateData(byte[] data) {
        if (data.length > Fabric.MAX_PRIVATE_DATA) {
            throw new FabricException("private data of " + data.length + " bytes exceeds " + Fabric.MAX_PRIVATE_DATA);
        }
    }

    private void start(FrameChannel requestSocket, FrameChannel serviceSocket, long peerRnrNanos, long peerTimeoutNanos,
                       byte[] peerData, URI peerUri) {
        synchronized (lock) {
            if (state() != State.CONNECTING) {
                requestSocket.close();
                serviceSocket.close();
                throw new FabricException("endpoint was closed while connecting to " + peerUri);
            }
            this.requests = requestSocket;
            this.service = serviceSocket;
            established(peerUri, peerData);
        }
        String name = peerUri.getHost() + ":" + peerUri.getPort();
        fabric().startEngineThread("erda-tcp-completer-" + name, this::completeResponses);
        Responder responder = new Responder(this, fabric(), serviceSocket, peerRnrNanos);
        responderThread = fabric().startEngineThread("erda-tcp-responder-" + name, responder);
        long own = ownPeerTimeoutNanos();
        long agreed = peerTimeoutNanos > 0 ? Math.min(own, peerTimeoutNanos) : own;
        // a platform thread: heartbeats must not wait for a carrier while virtual threads keep them all busy
        Thread.ofPlatform().daemon().name("erda-tcp-heartbeat-" + name).start(() -> sendHeartbeats(agreed));
        Thread.ofVirtual().name("erda-tcp-watcher-" + name).start(() -> watchPeer(agreed)); // late only delays it
    }

    // ---------------------------------------------------------------- dead peers (class Javadoc)

    /** Writes a frame on the service socket; the responder's and the heartbeats' writes never interleave. */
    void writeService(FrameHeader h, ByteBuffer payload) throws IOException {
        serviceLock.lock();
        try {
            service.write(h, payload);
        } finally {
            serviceLock.unlock();
        }
    }

    /** A HEARTBEAT every fifth of the timeout, unless the responder is writing (its bytes show we live). */
    private void sendHeartbeats(long timeoutNanos) {
        FrameHeader h = new FrameHeader();
        long interval = timeoutNanos / TcpSettings.HEARTBEATS_PER_TIMEOUT;
        while (isConnected()) {
            LockSupport.parkNanos(interval);
            if (!serviceLock.tryLock()) {
                continue;
            }
            try {
                if (isConnected()) {
                    service.write(h.reset(WireOpcode.HEARTBEAT), null); // may block while the peer reads nothing
                }
            } catch (IOException e) {
                return; // the socket broke or closed: the completer or the watcher reports it
            } finally {
                serviceLock.unlock();
            }
        }
    }

    /** Fails the endpoint once nothing arrived on either socket for longer than the agreed timeout. */
    private void watchPeer(long timeoutNanos) {
        long interval = timeoutNanos / TcpSettings.HEARTBEATS_PER_TIMEOUT;
        while (isConnected()) {
            LockSupport.parkNanos(interval);
            long silent = System.nanoTime() - Math.max(requests.lastReceivedNanos(), service.lastReceivedNanos());
            if (silent > timeoutNanos) {
                fail(Status.RETRY_EXCEEDED, "nothing received from " + peer() + " for "
                        + TimeUnit.NANOSECONDS.toMillis(silent) + " ms, more than the peer timeout of "
                        + TimeUnit.NANOSECONDS.toMillis(timeoutNanos) + " ms (tcp fabric property "
                        + TcpSettings.PEER_TIMEOUT + "): the peer died, hangs or is cut off", true);
                return;
            }
        }
    }

    static URI uriOf(SocketChannel channel) throws IOException {
        InetSocketAddress a = (InetSocketAddress) channel.getRemoteAddress();
        try {
            return new URI("tcp", null, a.getHostString(), a.getPort(), null, null, null);
        } catch (URISyntaxException e) {
            throw new IOException("peer address " + a + " is not a URI", e);
        }
    }

    // ---------------------------------------------------------------- posting

    @Override
    public void post(WorkRequest wr) {
        LocalProblem problem = localProblem(wr);
        sendLock.lock();
        try {
            long seq;
            synchronized (lock) {
                State state = state();
                if (state == State.CLOSED) {
                    throw new FabricException("endpoint to " + peer() + " is closed");
                }
                if (state != State.CONNECTED) {
                    sendQueue().add(Completion.error(wr.wrId(), wr.opcode(), Status.WR_FLUSH_ERROR, this,
                            "endpoint is " + state));
                    return;
                }
                if (pending.size() >= options.maxSendWr()) {
                    throw new FabricException("send queue full: " + pending.size() + " of " + options.maxSendWr()
                            + " requests outstanding");
                }
                if (problem != null || poisoned) {
                    Status s = problem != null ? problem.status() : Status.WR_FLUSH_ERROR;
                    String d = problem != null ? problem.detail() : "posted after a request that failed locally";
                    poisoned = true;
                    if (pending.isEmpty()) {
                        sendQueue().add(Completion.error(wr.wrId(), wr.opcode(), s, this, d));
                        failLocked(Status.WR_FLUSH_ERROR, "a request failed locally: " + d, false);
                    } else {
                        pending.addLast(new Pending(wr, 0, s, d));
                    }
                    return;
                }
                seq = nextSeq++;
                pending.addLast(new Pending(wr, seq, null, null));
                fabric().posted.count(wr.opcode());
            }
            writeRequest(wr, seq);
        } catch (IOException e) {
            fail(Status.RETRY_EXCEEDED, "sending to " + peer() + " failed: " + e.getMessage(), true);
        } finally {
            sendLock.unlock();
        }
    }

    /** Why a request or receive cannot use its local buffer. */
    record LocalProblem(Status status, String detail) { }

    private LocalProblem localProblem(WorkRequest wr) {
        Opcode op = wr.opcode();
        if (op != Opcode.FLUSH && wr.length() > FrameHeader.MAX_PAYLOAD) {
            return new LocalProblem(Status.LOCAL_LENGTH_ERROR, op + " of " + wr.length() + " bytes exceeds the tcp limit of "
                    + FrameHeader.MAX_PAYLOAD);
        }
        if (op.isAtomic() && wr.length() != WorkRequest.ATOMIC_LENGTH) {
            return new LocalProblem(Status.LOCAL_QP_OPERATION_ERROR, op + " of " + wr.length() + " bytes; atomics are 8 bytes");
        }
        if (op == Opcode.FLUSH || wr.local() == null || wr.length() == 0) {
            return null; // FLUSH and ATOMIC_WRITE have no local buffer
        }
        boolean writesLocal = op == Opcode.READ || op.isAtomic();
        return checkLocalBuffer(wr.local(), wr.localOffset(), wr.length(), writesLocal);
    }

    /** Null if {@code [offset, +length)} of {@code region} is usable locally, else why not. */
    LocalProblem checkLocalBuffer(MemoryRegion region, long offset, long length, boolean writesLocal) {
        var check = EmulatedRegion.checkLocal(fabric(), region, offset, length, writesLocal);
        return check.ok() ? null : new LocalProblem(check.status(), check.detail());
    }

    private void writeRequest(WorkRequest wr, long seq) throws IOException {
        FrameHeader h = sendHeader.reset(WireOpcode.of(wr.opcode())).sequence(seq).remoteAddress(wr.remoteAddress())
                .rkey(wr.rkey()).imm(wr.immData()).compareAdd(wr.compareAdd()).swap(wr.swap());
        ByteBuffer payload = null;
        switch (wr.opcode()) {
            case WRITE, WRITE_WITH_IMM, SEND -> {
                h.payloadLength(wr.length());
                if (wr.length() > 0) {
                    payload = wr.local().segment().asSlice(wr.localOffset(), wr.length()).asByteBuffer();
                }
            }
            default -> h.operandLength(wr.length());
        }
        requests.write(h, payload);
    }

    @Override
    public void postRecv(RecvRequest request) {
        synchronized (lock) {
            State state = state();
            if (state == State.CLOSED) {
                throw new FabricException("endpoint to " + peer() + " is closed");
            }
            if (state == State.ERROR) {
                recvQueue().add(Completion.error(request.wrId(), Opcode.RECV, Status.WR_FLUSH_ERROR, this,
                        "endpoint is in ERROR"));
                return;
            }
            if (!posted.offerLast(request)) {
                throw new FabricException("receive queue full: " + options.maxRecvWr() + " receives posted");
            }
        }
    }

    /** Responder: the next posted receive, waiting up to the initiator's RNR window; null if none came. */
    RecvRequest takeRecv(long rnrNanos) throws InterruptedException {
        return posted.pollFirst(rnrNanos, TimeUnit.NANOSECONDS);
    }

    /**
     * Responder: a receive's completion, which the queue's idle consumer may take on this thread (deliver). Its CPU
     * there is the application's, not the engine's: one run in {@link TcpFabric#HOSTED_CPU_SAMPLE} is measured (the
     * thread's CPU clock is a system call) and that many times its CPU is taken off the engine's. The responder
     * acknowledges the SEND or WRITE_WITH_IMM after this returns, so the peer's work request completes after the
     * consumer ran (Erda's clients post requests unsignalled and wait for the reply instead).
     */
    void completeRecv(Completion c) {
        boolean measured = ThreadLocalRandom.current().nextInt(TcpFabric.HOSTED_CPU_SAMPLE) == 0;
        long before = measured ? TcpFabric.threadCpuNanos() : 0;
        if (recvQueue().deliver(c) && measured) {
            fabric().hostedCpu(TcpFabric.threadCpuNanos() - before);
        }
    }

    // ---------------------------------------------------------------- completions

    /** Completer thread: reads responses in order and turns them into completions. */
    private void completeResponses() {
        FrameChannel channel = requests;
        FrameHeader h = new FrameHeader();
        try {
            while (true) {
                channel.readHeader(h);
                if (h.opcode() == WireOpcode.HEARTBEAT) {
                    continue; // it arrived: that was all it had to say
                }
                if (!WireOpcode.isResponse(h.opcode())) {
                    throw new ProtocolViolation("expected a response, got " + h);
                }
                Pending p;
                synchronized (lock) {
                    p = state() == State.CONNECTED ? pending.peekFirst() : null;
                }
                if (p == null) {
                    if (state() == State.CONNECTED) {
                        throw new ProtocolViolation("response " + h + " with no request outstanding");
                    }
                    channel.skip(h.payloadLength()); // answer to a request flushed when the endpoint failed
                    continue;
                }
                if (p.localError() != null || p.seq() != h.sequence() || WireOpcode.request(h.opcode()) != WireOpcode.of(p.wr().opcode())) {
                    throw new ProtocolViolation("response " + h + " does not match the oldest outstanding request "
                            + p.wr().opcode() + " seq " + p.seq());
                }
                Status status = statusOf(h.status());
                String detail = null;
                int bytes = 0;
                WorkRequest wr = p.wr();
                if (status == Status.SUCCESS) {
                    bytes = receiveResult(channel, h, wr);
                } else {
                    detail = channel.readText(h.payloadLength());
                }
                synchronized (lock) {
                    if (pending.peekFirst() != p) {
                        continue; // flushed while we read its data
                    }
                    pending.pollFirst();
                    if (status == Status.SUCCESS) {
                        if (wr.signaled()) {
                            sendQueue().add(Completion.success(wr.wrId(), wr.opcode(), bytes, this));
                        }
                    } else {
                        sendQueue().add(Completion.error(wr.wrId(), wr.opcode(), status, this, detail));
                        failLocked(Status.WR_FLUSH_ERROR, "an earlier request failed: " + status + " " + detail, false);
                    }
                    Pending next = pending.peekFirst();
                    if (next != null && next.localError() != null) {
                        pending.pollFirst();
                        sendQueue().add(Completion.error(next.wr().wrId(), next.wr().opcode(), next.localError(), this,
                                next.detail()));
                        failLocked(Status.WR_FLUSH_ERROR, "a request failed locally: " + next.detail(), false);
                    }
                }
            }
        } catch (EOFException e) {
            fail(Status.RETRY_EXCEEDED, Completion.PEER_CLOSED + " (" + peer() + ")", false);
        } catch (ProtocolViolation e) {
            LOG.log(System.Logger.Level.WARNING, "closing connection to " + peer() + ": protocol violation: "
                    + e.getMessage());
            fail(Status.RETRY_EXCEEDED, "protocol violation by " + peer() + ": " + e.getMessage(), true);
        } catch (IOException | RuntimeException e) {
            fail(Status.RETRY_EXCEEDED, "connection to " + peer() + " lost: " + e, true);
        } finally {
            channel.close();
        }
    }

    private static int receiveResult(FrameChannel channel, FrameHeader h, WorkRequest wr) throws IOException {
        switch (wr.opcode()) {
            case READ -> {
                if (h.payloadLength() != wr.length()) {
                    throw new ProtocolViolation("READ response of " + h.payloadLength() + " bytes for " + wr.length() + " asked");
                }
                if (wr.length() > 0) {
                    channel.readFully(wr.local().segment().asSlice(wr.localOffset(), wr.length()).asByteBuffer());
                }
                return wr.length();
            }
            case CAS, FETCH_ADD -> {
                expectNoPayload(h);
                wr.local().segment().set(ValueLayout.JAVA_LONG_UNALIGNED, wr.localOffset(), h.compareAdd());
                return WorkRequest.ATOMIC_LENGTH;
            }
            default -> {
                expectNoPayload(h);
                return wr.opcode() == Opcode.FLUSH ? 0 : wr.length();
            }
        }
    }

    private static void expectNoPayload(FrameHeader h) throws ProtocolViolation {
        if (h.payloadLength() != 0) {
            throw new ProtocolViolation("successful " + h + " carries an unexpected payload");
        }
    }

    static Status statusOf(int code) throws ProtocolViolation {
        Status[] all = Status.values();
        if (code >= all.length) {
            throw new ProtocolViolation("unknown status code " + code);
        }
        return all[code];
    }

    // ---------------------------------------------------------------- failure and close

    boolean isConnected() {
        return state() == State.CONNECTED;
    }

    /**
     * Moves to ERROR: the oldest outstanding request completes with {@code first}, the others and every posted
     * receive with WR_FLUSH_ERROR; the sockets get FIN (or RST if {@code abortive}) so the peer fails too.
     */
    void fail(Status first, String reason, boolean abortive) {
        synchronized (lock) {
            failLocked(first, reason, abortive);
        }
    }

    private void failLocked(Status first, String reason, boolean abortive) {
        if (!toError(reason)) {
            if (abortive) {
                breakSockets(true);
            }
            return;
        }
        boolean oldest = true;
        for (Pending p : pending) {
            Status s = oldest && p.localError() == null ? first : Status.WR_FLUSH_ERROR;
            sendQueue().add(Completion.error(p.wr().wrId(), p.wr().opcode(), s, this, reason));
            oldest = false;
        }
        pending.clear();
        RecvRequest r;
        while ((r = posted.pollFirst()) != null) {
            recvQueue().add(Completion.error(r.wrId(), Opcode.RECV, Status.WR_FLUSH_ERROR, this, reason));
        }
        breakSockets(abortive);
    }

    private void breakSockets(boolean abortive) {
        for (FrameChannel c : new FrameChannel[] {requests, service}) {
            if (c == null) {
                continue;
            }
            if (abortive) {
                c.abort();
            } else {
                c.shutdownOutput();
            }
        }
    }

    @Override
    public void abort() {
        fail(Status.WR_FLUSH_ERROR, "connection aborted locally", true);
    }

    @Override
    public void close() {
        synchronized (lock) {
            if (state() == State.CLOSED) {
                return;
            }
            failLocked(Status.WR_FLUSH_ERROR, "endpoint closed", false);
            toClosed("endpoint closed");
        }
        for (FrameChannel c : new FrameChannel[] {requests, service}) {
            if (c != null) {
                c.close();
            }
        }
        Thread t = responderThread;
        if (t != null) {
            t.interrupt();
        }
        fabric().untrack(this);
    }

    MemorySegment recvBuffer(RecvRequest r, int length) {
        return r.local().segment().asSlice(r.localOffset(), length);
    }
}
