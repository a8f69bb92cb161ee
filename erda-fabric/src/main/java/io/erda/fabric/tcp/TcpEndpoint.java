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
import io.erda.fabric.soft.SoftCompletionQueue;
import io.erda.fabric.soft.SoftRegion;
import io.erda.fabric.tcp.wire.FrameChannel;
import io.erda.fabric.tcp.wire.FrameHeader;
import io.erda.fabric.tcp.wire.ProtocolViolation;
import io.erda.fabric.tcp.wire.WireOpcode;
import java.io.EOFException;
import java.io.IOException;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.net.InetSocketAddress;
import java.net.URI;
import java.net.URISyntaxException;
import java.nio.ByteBuffer;
import java.nio.channels.SocketChannel;
import java.util.ArrayDeque;
import java.util.concurrent.LinkedBlockingDeque;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.ReentrantLock;

/**
 * An RC queue pair of the tcp provider. A connection is two sockets, one per direction of requests: on the
 * {@code requests} socket this side writes its requests (from the posting thread, in posting order) and its
 * completer thread reads the responses; on the {@code service} socket the {@link Responder} reads the peer's
 * requests and writes the responses. Keeping the directions apart means a responder blocked writing a large READ
 * response can never wait on the other side's responder, so heavy traffic both ways cannot deadlock.
 */
final class TcpEndpoint extends AbstractEndpoint<TcpFabric, SoftCompletionQueue> {
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

    private static SoftCompletionQueue softQueue(CompletionQueue given, int depth) {
        if (given == null) {
            return new SoftCompletionQueue(depth);
        }
        if (given instanceof SoftCompletionQueue soft) {
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
        try {
            InetSocketAddress address = new InetSocketAddress(uri.getHost(), uri.getPort());
            fwd = new FrameChannel(SocketChannel.open(address));
            rev = new FrameChannel(SocketChannel.open(address));
            long nonce = ThreadLocalRandom.current().nextLong();
            FrameHeader h = new FrameHeader();
            h.reset(WireOpcode.CONNECT).sequence(nonce).compareAdd(options.rnrTimeout().toNanos())
                    .payloadLength(privateData.length);
            fwd.write(h, ByteBuffer.wrap(privateData));
            h.reset(WireOpcode.ATTACH).sequence(nonce);
            rev.write(h, null);
            h.readFrom(fwd.socket());
            switch (h.opcode()) {
                case WireOpcode.ACCEPT -> {
                    byte[] reply = fwd.readBytes(h.payloadLength());
                    start(fwd, rev, h.compareAdd(), reply, uri);
                }
                case WireOpcode.REJECT -> throw new FabricException("connection to " + uri + " rejected: " + fwd.readText(h.payloadLength()));
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

    /** Server side: called by the connection request on accept. */
    void acceptFrom(FrameChannel fwd, FrameChannel rev, long peerRnrNanos, byte[] peerData, URI peerUri, byte[] reply) {
        checkPrivateData(reply);
        beginConnecting();
        try {
            FrameHeader h = new FrameHeader();
            h.reset(WireOpcode.ACCEPT).compareAdd(options.rnrTimeout().toNanos()).payloadLength(reply.length);
            fwd.write(h, ByteBuffer.wrap(reply));
        } catch (IOException e) {
            fwd.close();
            rev.close();
            setUpFailed();
            throw new FabricException("accepting " + peerUri + " failed: " + e, e);
        }
        start(rev, fwd, peerRnrNanos, peerData, peerUri);
    }

    private static void checkPrivateData(byte[] data) {
        if (data.length > Fabric.MAX_PRIVATE_DATA) {
            throw new FabricException("private data of " + data.length + " bytes exceeds " + Fabric.MAX_PRIVATE_DATA);
        }
    }

    private void start(FrameChannel requestSocket, FrameChannel serviceSocket, long peerRnrNanos, byte[] peerData, URI peerUri) {
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
        var check = SoftRegion.checkLocal(fabric(), region, offset, length, writesLocal);
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

    void completeRecv(Completion c) {
        recvQueue().add(c);
    }

    // ---------------------------------------------------------------- completions

    /** Completer thread: reads responses in order and turns them into completions. */
    private void completeResponses() {
        FrameChannel channel = requests;
        FrameHeader h = new FrameHeader();
        try {
            while (true) {
                h.readFrom(channel.socket());
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
