package io.erda.fabric.shm;

import io.erda.fabric.AbstractEndpoint;
import io.erda.fabric.Completion;
import io.erda.fabric.CompletionQueue;
import io.erda.fabric.EndpointOptions;
import io.erda.fabric.FabricException;
import io.erda.fabric.MemoryRegion;
import io.erda.fabric.Opcode;
import io.erda.fabric.RecvRequest;
import io.erda.fabric.Status;
import io.erda.fabric.WorkRequest;
import io.erda.fabric.emulated.EmulatedCompletionQueue;
import io.erda.fabric.emulated.EmulatedRegion;
import java.io.IOException;
import java.lang.foreign.MemorySegment;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * An shm endpoint. One-sided requests are executed by the posting thread, in posting order, directly on the
 * peer's mapped memory ({@link PeerMemory}). SEND and WRITE_WITH_IMM publish a record into the outbound ring; the
 * peer's poller places it into a posted receive and answers ACK (or NAK: no receive within the sender's RNR
 * timeout, or a receive too short), and only then does the request complete, so a SEND's completion means the
 * message sits in a receive buffer, as with RC. Nothing posted behind an unacknowledged message executes before
 * the acknowledgement (it may still fail and take the connection down), except further messages, which pipeline.
 *
 * <p>Send-side state, the outbound ring and the receive queue are guarded by {@code this}; the inbound ring is
 * consumed by one thread at a time: the fabric's poller or a thread waiting on a completion queue (inline
 * progress, see {@link Poller}).
 */
final class ShmEndpoint extends AbstractEndpoint<ShmFabric, EmulatedCompletionQueue> {
    private static final Duration HANDSHAKE_TIMEOUT = Duration.ofSeconds(30);
    /**
     * A one-sided request whose modelled PM write delay exceeds this runs on a drainer thread instead of the
     * posting thread: short stalls are like a CPU's store stalls, but post() must not block for milliseconds
     * (verbs posting never waits for execution), and a long delay must leave the request outstanding.
     */
    private static final long INLINE_DELAY_LIMIT_NANOS = 20_000;

    private final EndpointOptions options;

    private ShmConnection connection;
    private PeerMemory peerMemory;
    /** Set by the poller when the socket reports EOF. */
    private volatile boolean peerGone;
    private Poller poller;

    /** Posted, not yet completed (completions leave from the head, in order). */
    private final ArrayDeque<Pending> uncompleted = new ArrayDeque<>();
    /** Posted, not yet executed or published. */
    private final ArrayDeque<Pending> unexecuted = new ArrayDeque<>();
    /** Published messages waiting for the peer's ACK or NAK. */
    private final ArrayDeque<Pending> unacknowledged = new ArrayDeque<>();
    private final ArrayDeque<RecvRequest> receives = new ArrayDeque<>();
    private long nextSequence = 1;
    /** A message did not fit the outbound ring: the poller retries when the peer frees space (it reads this without the lock). */
    private volatile boolean outboundFull;
    /** A drainer thread is executing the head request outside the lock; nobody else executes meanwhile. */
    private boolean draining;
    /** When the message at the inbound head first found no receive (0 = not waiting); set by the poller. */
    private volatile long rnrWaitingSince;

    private static final class Pending {
        final WorkRequest request;
        Outcome outcome;
        boolean writeDone;

        Pending(WorkRequest request) {
            this.request = request;
        }
    }

    ShmEndpoint(ShmFabric fabric, EndpointOptions options) {
        super(fabric, queue(fabric, options.sendQueue(), options.maxSendWr()),
                queue(fabric, options.recvQueue(), options.maxRecvWr()));
        this.options = options;
    }

    /** The endpoint itself: its synchronized methods guard the send side, the outbound ring and the receives. */
    @Override
    protected Object lock() {
        return this;
    }

    private static EmulatedCompletionQueue queue(ShmFabric fabric, CompletionQueue given, int depth) {
        if (given == null) {
            return (EmulatedCompletionQueue) fabric.createCompletionQueue(depth);
        }
        if (given instanceof EmulatedCompletionQueue soft) {
            return soft;
        }
        throw new FabricException("shm endpoints need completion queues of an shm fabric, got " + given.getClass().getName());
    }

    // ------------------------------------------------------------------ connection set-up

    @Override
    public void connect(URI uri, byte[] privateData) {
        Handshake.checkPrivateData(privateData);
        beginConnecting();
        Path dir = ShmFabric.directoryOf(uri);
        ShmConnection c = null;
        AtomicBoolean done = new AtomicBoolean();
        try {
            Path home = fabric().home(dir);
            c = ShmConnection.open(dir.resolve(ShmFabric.SOCKET_FILE));
            c.closeUnlessDone(options.connectTimeout(), done);
            Handshake.writeRequest(c.out, privateData, home);
            Handshake.Reply reply = Handshake.readReply(c.in);
            if (!reply.accepted()) {
                throw new FabricException("shm connection to " + uri + " rejected: " + reply.reason());
            }
            c.mapRings(reply.ringFile(), RingFile.TO_CONNECTOR);
            PeerMemory memory = new PeerMemory(reply.home());
            c.out.writeByte(Handshake.READY);
            c.out.flush();
            done.set(true);
            attach(c, memory, uri, reply.privateData());
        } catch (IOException | RuntimeException e) {
            done.set(true);
            throw handshakeFailed(c, e, "shm connection to " + uri);
        }
    }

    /** The acceptor's half of the handshake (called by the listener's connection request). */
    void accept(ShmConnection c, Handshake.Request request, byte[] replyPrivateData) {
        beginConnecting();
        AtomicBoolean done = new AtomicBoolean();
        Path ringFile = null;
        try {
            ringFile = fabric().createRingFile();
            c.mapRings(ringFile, RingFile.TO_ACCEPTOR);
            PeerMemory memory = new PeerMemory(request.home());
            c.closeUnlessDone(HANDSHAKE_TIMEOUT, done);
            Handshake.writeAccept(c.out, replyPrivateData, ringFile, fabric().home(null));
            int ready = c.in.read();
            done.set(true);
            if (ready != Handshake.READY) {
                memory.close();
                throw new FabricException("shm peer " + request.home() + " went away during the handshake (got " + ready + ")");
            }
            attach(c, memory, ShmFabric.uriOf(request.home()), request.privateData());
        } catch (IOException | RuntimeException e) {
            done.set(true);
            throw handshakeFailed(c, e, "shm accept of " + request.home());
        } finally {
            if (ringFile != null) {
                try {
                    Files.deleteIfExists(ringFile); // both sides have it mapped (or the handshake failed)
                } catch (IOException e) {
                    // the instance directory is removed on close anyway
                }
            }
        }
    }

    /** Undoes a half-made connection (the endpoint is IDLE again) and says why. */
    private FabricException handshakeFailed(ShmConnection c, Exception e, String what) {
        if (c != null) {
            c.closeSocket();
            c.unmapRings();
        }
        setUpFailed();
        return e instanceof FabricException fe ? fe : new FabricException(what + " failed: " + e, e);
    }

    /** CONNECTING → CONNECTED; throws (the caller undoes the handshake) if the endpoint was closed meanwhile. */
    private void attach(ShmConnection c, PeerMemory memory, URI peerUri, byte[] peerData) {
        synchronized (this) {
            if (state() != State.CONNECTING) {
                memory.close();
                throw new FabricException("shm endpoint was closed while connecting to " + peerUri);
            }
            connection = c;
            peerMemory = memory;
            poller = fabric().poller();
            established(peerUri, peerData);
        }
        poller.add(this);
    }

    // ------------------------------------------------------------------ posting

    @Override
    public synchronized void post(WorkRequest request) {
        State state = state();
        if (state == State.CLOSED) {
            throw new FabricException("post on a closed endpoint");
        }
        if (state != State.CONNECTED) {
            sendQueue().add(Completion.error(request.wrId(), request.opcode(), Status.WR_FLUSH_ERROR, this,
                    "endpoint is " + state));
            return;
        }
        if (uncompleted.size() >= options.maxSendWr()) {
            // the peer's acknowledgements of finished requests may wait in the inbound ring (a caller that never
            // waits on its send queue drives no progress): consume them once before calling the queue full
            poller.progress();
        }
        if (uncompleted.size() >= options.maxSendWr()) {
            throw new FabricException("send queue full: " + uncompleted.size() + " requests outstanding, maxSendWr "
                    + options.maxSendWr());
        }
        Pending p = new Pending(request);
        uncompleted.add(p);
        fabric().posted.count(request.opcode());
        unexecuted.add(p);
        pump();
    }

    /**
     * A signalled READ or WRITE that finds nothing posted before it still outstanding, on a connected endpoint, and
     * whose modelled delay post would also spend inline: executed here as pump would, without a Pending, a queued
     * Completion or the queue's wake-up logic. A failure takes pump's path (the error completes on the queue, the
     * endpoint fails); anything else is posted.
     */
    @Override
    public synchronized boolean executeNow(WorkRequest request) {
        Opcode op = request.opcode();
        if (!request.signaled() || (op != Opcode.READ && op != Opcode.WRITE) || state() != State.CONNECTED
                || !uncompleted.isEmpty() || draining || peerMemory.modelledDelayNanos(request) > INLINE_DELAY_LIMIT_NANOS) {
            post(request);
            return false;
        }
        fabric().posted.count(op);
        Outcome outcome = checkLocal(request);
        if (outcome.ok()) {
            outcome = peerMemory.execute(request, localSegment(request));
            if (outcome.ok()) {
                return true;
            }
        }
        Pending p = new Pending(request);
        p.outcome = outcome;
        uncompleted.add(p);
        fail(outcome.detail()); // delivers p's error completion, as pump's failures do
        return false;
    }

    /** Executes or publishes what may go next, in order; then delivers completions in order. Holds the lock. */
    private void pump() {
        while (state() == State.CONNECTED && !draining && !unexecuted.isEmpty()) {
            Pending p = unexecuted.peek();
            WorkRequest wr = p.request;
            Opcode op = wr.opcode();
            if (op.isOneSided() && !unacknowledged.isEmpty()) {
                break;
            }
            Outcome local = checkLocal(wr);
            if (!local.ok()) {
                unexecuted.poll();
                p.outcome = local;
                fail(local.detail());
                return;
            }
            if (op == Opcode.SEND || op == Opcode.WRITE_WITH_IMM) {
                if (op == Opcode.WRITE_WITH_IMM && !p.writeDone) {
                    Outcome written = peerMemory.execute(wr, localSegment(wr));
                    if (!written.ok()) {
                        unexecuted.poll();
                        p.outcome = written;
                        fail(written.detail());
                        return;
                    }
                    p.writeDone = true;
                }
                boolean send = op == Opcode.SEND;
                peerMemory.messageSent();
                boolean published = connection.publish(send ? RingRecord.SEND : RingRecord.WRITE_IMM,
                        nextSequence, wr.immData(), options.rnrTimeout().toNanos(), send ? localSegment(wr) : null,
                        wr.localOffset(), wr.length());
                if (!published) {
                    outboundFull = true; // the poller retries once the peer consumed
                    break;
                }
                nextSequence++;
                unexecuted.poll();
                unacknowledged.add(p);
            } else if (peerMemory.modelledDelayNanos(wr) > INLINE_DELAY_LIMIT_NANOS) {
                draining = true;
                Thread.ofVirtual().name("erda-shm-drainer").start(() -> executeSlowly(p));
                break;
            } else {
                unexecuted.poll();
                p.outcome = peerMemory.execute(wr, localSegment(wr));
                if (!p.outcome.ok()) {
                    fail(p.outcome.detail());
                    return;
                }
            }
        }
        deliverCompletions();
    }

    /** Drainer: executes the head request (a long modelled write) without holding the lock, then resumes pumping. */
    private void executeSlowly(Pending p) {
        Outcome outcome;
        try {
            outcome = peerMemory.execute(p.request, localSegment(p.request));
        } catch (RuntimeException e) {
            outcome = new Outcome(Status.REMOTE_OPERATION_ERROR, "shm execution failed: " + e);
        }
        synchronized (this) {
            draining = false;
            if (state() == State.CLOSED) {
                peerMemory.close(); // close() left it to us
                return;
            }
            if (p.outcome != null || unexecuted.peek() != p) {
                return; // flushed meanwhile
            }
            unexecuted.poll();
            p.outcome = outcome;
            if (!outcome.ok()) {
                fail(outcome.detail());
            } else {
                pump();
            }
        }
    }

    private static MemorySegment localSegment(WorkRequest wr) {
        return wr.local() == null ? MemorySegment.NULL : wr.local().segment();
    }

    private Outcome checkLocal(WorkRequest wr) {
        Opcode op = wr.opcode();
        if (op.isAtomic() && wr.length() != WorkRequest.ATOMIC_LENGTH) {
            return new Outcome(Status.LOCAL_QP_OPERATION_ERROR, op + " of " + wr.length() + " bytes; atomics are 8");
        }
        if (op == Opcode.SEND && wr.length() > connection.outbound.maxPayload()) {
            return new Outcome(Status.LOCAL_LENGTH_ERROR, "message of " + wr.length() + " bytes exceeds the shm ring's "
                    + connection.outbound.maxPayload() + " (property ringCapacity)");
        }
        if (op == Opcode.FLUSH || wr.local() == null) { // FLUSH, ATOMIC_WRITE and empty requests have no buffer
            return Outcome.SUCCESS;
        }
        boolean writesLocal = op == Opcode.READ || op.isAtomic();
        return checkBuffer(wr.local(), wr.localOffset(), wr.length(), writesLocal);
    }

    private Outcome checkBuffer(MemoryRegion region, long offset, long length, boolean needsWrite) {
        var check = EmulatedRegion.checkLocal(fabric(), region, offset, length, needsWrite);
        return check.ok() ? Outcome.SUCCESS : new Outcome(check.status(), check.detail());
    }

    private void deliverCompletions() {
        Pending p;
        while ((p = uncompleted.peek()) != null && p.outcome != null) {
            uncompleted.poll();
            WorkRequest wr = p.request;
            if (!p.outcome.ok()) {
                sendQueue().add(Completion.error(wr.wrId(), wr.opcode(), p.outcome.status(), this, p.outcome.detail()));
            } else if (wr.signaled()) {
                sendQueue().add(Completion.success(wr.wrId(), wr.opcode(), wr.length(), this));
            }
        }
    }

    @Override
    public synchronized void postRecv(RecvRequest request) {
        State state = state();
        if (state == State.CLOSED) {
            throw new FabricException("postRecv on a closed endpoint");
        }
        if (state == State.ERROR) {
            recvQueue().add(Completion.error(request.wrId(), Opcode.RECV, Status.WR_FLUSH_ERROR, this,
                    "endpoint is ERROR"));
            return;
        }
        if (receives.size() >= options.maxRecvWr()) {
            throw new FabricException("receive queue full: " + receives.size() + " receives posted, maxRecvWr "
                    + options.maxRecvWr());
        }
        receives.add(request);
        if (rnrWaitingSince != 0) {
            poller.wakeup(); // a message waits for this receive: do not leave it to the poller's timed sleep
        }
    }

    // ------------------------------------------------------------------ the poller's side

    ShmConnection connection() {
        return connection;
    }

    /** Poller: the socket reported EOF; the next poll fails the endpoint once the inbound ring is drained. */
    void peerGone() {
        peerGone = true;
    }

    /** Poller, before it sleeps: true if this endpoint needs a poll after a while though no doorbell rings. */
    boolean waitsOnTime() {
        return rnrWaitingSince != 0; // a full outbound ring rings us when the peer frees space (RingFile)
    }

    /** Poller or inline poller (holding its lock): handles inbound records; returns the work done, or -1 once the endpoint is finished with. */
    int poll() {
        State state = state();
        if (state == State.ERROR || state == State.CLOSED) {
            synchronized (this) {
                connection.unmapRings(); // no thread touches the rings once the endpoint left CONNECTED
            }
            return -1;
        }
        // Read before the ring: whatever the peer published before its socket closed is visible by now.
        boolean gone = peerGone;
        int work = 0;
        boolean stuck = false;
        Ring inbound = connection.inbound;
        while (work < 64) {
            int frame;
            try {
                frame = inbound.headFrame();
            } catch (RingViolation e) {
                synchronized (this) {
                    fail("shm ring from " + peer() + ": " + e.getMessage());
                }
                return work;
            }
            if (frame == 0 || !handle(inbound, frame)) {
                stuck = true;
                break;
            }
            work++;
        }
        if (work > 0) {
            connection.spaceFreed();
        }
        if (outboundFull) {
            synchronized (this) {
                outboundFull = false;
                pump();
            }
        }
        if (gone && stuck) { // nothing more will come, and what waits (a message without a receive) never will be served
            synchronized (this) {
                fail(Completion.PEER_CLOSED + " (" + peer() + ")"); // its socket ended: closed, or its process died
            }
        }
        return work;
    }

    /** Handles the record at the inbound head; false if it must wait (or the endpoint failed). */
    private synchronized boolean handle(Ring inbound, int frame) {
        if (state() != State.CONNECTED) {
            return false;
        }
        switch (inbound.headType()) {
            case RingRecord.PAD -> inbound.consumeHead(frame);
            case RingRecord.ACK -> {
                inbound.consumeHead(frame);
                Pending p = unacknowledged.poll();
                if (p != null) {
                    p.outcome = Outcome.SUCCESS;
                }
                pump();
            }
            case RingRecord.NAK -> {
                Status status = inbound.headStatus();
                String detail = utf8(inbound.headPayload());
                inbound.consumeHead(frame);
                Pending p = unacknowledged.poll();
                if (p != null) {
                    p.outcome = new Outcome(status, detail);
                }
                fail(detail);
                return false;
            }
            case RingRecord.SEND, RingRecord.WRITE_IMM -> {
                return deliver(inbound, frame);
            }
            default -> {
                fail("shm ring from " + peer() + " holds a record of unknown type " + inbound.headType());
                return false;
            }
        }
        return true;
    }

    /** Places the inbound message into the next posted receive and answers the sender. Holds the lock. */
    private boolean deliver(Ring inbound, int frame) {
        long sequence = inbound.headSequence();
        RecvRequest r = receives.peek();
        if (r == null) {
            long now = System.nanoTime();
            if (rnrWaitingSince == 0) {
                rnrWaitingSince = now;
            }
            long timeout = inbound.headRnrTimeoutNanos();
            if (now - rnrWaitingSince < timeout) {
                return false;
            }
            if (!answer(RingRecord.NAK, sequence, Status.RNR_RETRY_EXCEEDED, "no receive posted at "
                    + fabric().home(null) + " within the sender's RNR timeout of "
                    + Duration.ofNanos(timeout).toMillis() + " ms")) {
                return false;
            }
            rnrWaitingSince = 0;
            inbound.consumeHead(frame);
            return true;
        }
        boolean send = inbound.headType() == RingRecord.SEND;
        int length = inbound.headPayloadLength();
        Outcome buffer = checkBuffer(r.local(), r.localOffset(), r.length(), true);
        Status senderStatus = Status.REMOTE_OPERATION_ERROR;
        if (buffer.ok() && send && length > r.length()) {
            buffer = new Outcome(Status.LOCAL_LENGTH_ERROR, "message of " + length + " bytes exceeds the posted receive of "
                    + r.length() + " bytes");
            senderStatus = Status.REMOTE_INVALID_REQUEST;
        }
        if (!answer(buffer.ok() ? RingRecord.ACK : RingRecord.NAK, sequence, senderStatus, buffer.detail())) {
            return false; // no room for the answer yet: leave the message where it is
        }
        rnrWaitingSince = 0;
        receives.poll();
        Opcode opcode = send ? Opcode.RECV : Opcode.RECV_WITH_IMM;
        if (!buffer.ok()) {
            inbound.consumeHead(frame);
            recvQueue().add(Completion.error(r.wrId(), opcode, buffer.status(), this, buffer.detail()));
            fail(buffer.detail());
            return false;
        }
        if (send) {
            MemorySegment.copy(inbound.headPayload(), 0, r.local().segment(), r.localOffset(), length);
            recvQueue().add(Completion.success(r.wrId(), opcode, length, this));
        } else {
            recvQueue().add(new Completion(r.wrId(), opcode, Status.SUCCESS, length, inbound.headImm(), true, this,
                    null));
        }
        inbound.consumeHead(frame);
        return true;
    }

    private boolean answer(int type, long sequence, Status status, String detail) {
        if (type == RingRecord.ACK) {
            return connection.publish(type, sequence, 0, 0, null, 0, 0);
        }
        MemorySegment text = MemorySegment.ofArray(detail.getBytes(StandardCharsets.UTF_8));
        return connection.publish(type, sequence, status.ordinal(), 0, text, 0, (int) text.byteSize());
    }

    private static String utf8(MemorySegment bytes) {
        return new String(bytes.toArray(java.lang.foreign.ValueLayout.JAVA_BYTE), StandardCharsets.UTF_8);
    }

    // ------------------------------------------------------------------ errors and tear-down

    /** Moves to ERROR: flushes everything outstanding and drops the connection, so the peer follows. Holds the lock. */
    private void fail(String reason) {
        if (state() != State.CONNECTED) {
            return; // before it connected there is nothing to flush or drop; abort() of an IDLE endpoint is a no-op
        }
        toError(reason);
        flushAll(reason);
        connection.closeSocket();
        poller.wakeup(); // so that it lets go of the rings now, not after its sleep
    }

    private void flushAll(String reason) {
        String detail = "flushed: " + reason;
        for (Pending p : uncompleted) {
            if (p.outcome == null) {
                p.outcome = new Outcome(Status.WR_FLUSH_ERROR, detail);
            }
        }
        unexecuted.clear();
        unacknowledged.clear();
        deliverCompletions();
        RecvRequest r;
        while ((r = receives.poll()) != null) {
            recvQueue().add(Completion.error(r.wrId(), Opcode.RECV, Status.WR_FLUSH_ERROR, this, detail));
        }
    }

    @Override
    public synchronized void abort() {
        fail("aborted");
    }

    @Override
    public void close() {
        synchronized (this) {
            if (!toClosed("endpoint closed")) {
                return;
            }
            boolean attached = connection != null;
            flushAll("endpoint closed");
            if (attached) {
                connection.closeSocket();
                poller.wakeup();
                if (!draining) {
                    peerMemory.close(); // else the drainer closes it when done
                }
            }
        }
        fabric().forget(this);
    }

    /** Fabric close: the poller has stopped, so the rings can go too. */
    synchronized void release() {
        close();
        if (connection != null) {
            connection.unmapRings();
        }
    }
}
