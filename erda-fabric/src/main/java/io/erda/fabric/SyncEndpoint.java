package io.erda.fabric;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.time.Duration;
import java.util.concurrent.TimeUnit;

/**
 * A synchronous convenience layer over one endpoint: each call posts one signalled request and waits for its
 * completion, throwing {@link CompletionException} on an error status; a request the provider finishes at once
 * ({@link Endpoint#executeNow}) needs no wait. The endpoint's send completion queue must
 * be its own (not shared). Calls are serialized (synchronized): use one per thread for parallelism.
 */
public final class SyncEndpoint implements AutoCloseable {
    private final Endpoint endpoint;
    private final Duration timeout;
    private final Arena arena = Arena.ofShared();
    private final MemoryRegion scratch;
    private long nextWrId = 1;

    public SyncEndpoint(Endpoint endpoint) {
        this(endpoint, Duration.ofSeconds(30));
    }

    public SyncEndpoint(Endpoint endpoint, Duration timeout) {
        this.endpoint = endpoint;
        this.timeout = timeout;
        this.scratch = endpoint.fabric().registerLocal(arena.allocate(WorkRequest.ATOMIC_LENGTH, 8));
    }

    public Endpoint endpoint() {
        return endpoint;
    }

    public synchronized void read(MemoryRegion local, long localOffset, int length, long remoteAddress, int rkey) {
        execute(WorkRequest.read(nextWrId++, local, localOffset, length, remoteAddress, rkey));
    }

    public synchronized void write(MemoryRegion local, long localOffset, int length, long remoteAddress, int rkey) {
        execute(WorkRequest.write(nextWrId++, local, localOffset, length, remoteAddress, rkey));
    }

    /**
     * Posts a signalled WRITE and returns without waiting, so the caller can do something else meanwhile (a
     * replicated PUT WRITEs its backup while its primary's WRITE is in flight). The caller must {@link
     * Pending#await} it before its next call on this endpoint: until then its completion is the queue's next one.
     */
    public synchronized Pending startWrite(MemoryRegion local, long localOffset, int length, long remoteAddress, int rkey) {
        WorkRequest request = WorkRequest.write(nextWrId++, local, localOffset, length, remoteAddress, rkey);
        endpoint.post(request);
        return new Pending(request.wrId());
    }

    /**
     * Posts an unsignalled WRITE and returns at once: for a WRITE that a later request on this endpoint depends on only
     * through the connection's order (a one-sided PUT's object, then the CAS that publishes it). The target executes
     * requests in posting order, and the completion of a later READ, FLUSH or atomic implies the WRITE visible (the
     * conformance suite's completionOfAReadFlushOrAtomicImpliesEveryEarlierWriteIsVisible); if it fails, every later
     * request is flushed unexecuted and the next waiting call here throws its error. The caller must not change the
     * local bytes until such a later call returned.
     */
    public synchronized void writeUnsignaled(MemoryRegion local, long localOffset, int length, long remoteAddress, int rkey) {
        endpoint.post(WorkRequest.write(nextWrId++, local, localOffset, length, remoteAddress, rkey).unsignaled());
    }

    /** A request posted by {@link #startWrite}; {@link #await} waits for its completion, once. */
    public final class Pending {
        private final long wrId;
        private boolean done;

        private Pending(long wrId) {
            this.wrId = wrId;
        }

        /** Waits for the completion; throws {@link CompletionException} on an error status, as the blocking calls do. */
        public void await() {
            synchronized (SyncEndpoint.this) {
                if (done) {
                    throw new IllegalStateException("wr " + wrId + " was already awaited");
                }
                done = true;
                check(wrId, SyncEndpoint.this.await(endpoint.sendQueue()));
            }
        }
    }

    public synchronized void writeWithImm(MemoryRegion local, long localOffset, int length, long remoteAddress, int rkey, int imm) {
        execute(WorkRequest.writeWithImm(nextWrId++, local, localOffset, length, remoteAddress, rkey, imm));
    }

    public synchronized void send(MemoryRegion local, long localOffset, int length) {
        execute(WorkRequest.send(nextWrId++, local, localOffset, length));
    }

    /**
     * Posts an unsignalled SEND and returns at once: for a request whose reply proves the peer received it (the
     * request-reply pattern of RDMA key-value stores, which signal only what they must). The caller may reuse the
     * buffer once the reply arrived, and must not before. Success completes nothing; a failure completes on the send
     * queue as an error (and, on every provider, fails the endpoint, which flushes the posted receives): {@link
     * #failedSend()} finds it for a caller whose receive failed, and a later call here throws it.
     */
    public synchronized void sendUnsignaled(MemoryRegion local, long localOffset, int length) {
        endpoint.post(WorkRequest.unsignaledSend(nextWrId++, local, localOffset, length));
    }

    /**
     * The error completion of an unsignalled request ({@link #sendUnsignaled}), or null if none comes within {@link
     * #FAILED_SEND_WAIT}: why a receive was flushed. The wait covers a device that completes the flush on the
     * receive queue a moment before the send's error on the other queue; a receive flushed for another reason (the
     * peer closed) costs its caller that long once, on a connection that is gone.
     */
    public synchronized Completion failedSend() {
        try {
            Completion c = endpoint.sendQueue().take(FAILED_SEND_WAIT.toNanos(), TimeUnit.NANOSECONDS);
            return c == null || c.isSuccess() ? null : c;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return null;
        }
    }

    /** How long {@link #failedSend} waits for the error of an unsignalled request. */
    public static final Duration FAILED_SEND_WAIT = Duration.ofMillis(100);

    /** Compare-and-swap; returns the value found (equal to {@code expected} if the swap happened). */
    public synchronized long compareAndSwap(long remoteAddress, int rkey, long expected, long newValue) {
        execute(WorkRequest.compareAndSwap(nextWrId++, scratch, 0, remoteAddress, rkey, expected, newValue));
        return scratch.segment().get(ValueLayout.JAVA_LONG, 0);
    }

    /** Fetch-and-add; returns the value before the addition. */
    public synchronized long fetchAdd(long remoteAddress, int rkey, long add) {
        execute(WorkRequest.fetchAdd(nextWrId++, scratch, 0, remoteAddress, rkey, add));
        return scratch.segment().get(ValueLayout.JAVA_LONG, 0);
    }

    /** Atomic write of {@code value} to an 8-byte aligned remote word. */
    public synchronized void atomicWrite(long remoteAddress, int rkey, long value) {
        execute(WorkRequest.atomicWrite(nextWrId++, remoteAddress, rkey, value));
    }

    public synchronized void flush(long remoteAddress, int length, int rkey) {
        execute(WorkRequest.flush(nextWrId++, remoteAddress, length, rkey));
    }

    /** Posts a receive buffer. */
    public void postRecv(MemoryRegion local, long localOffset, int length) {
        endpoint.postRecv(new RecvRequest(nextRecvId(), local, localOffset, length));
    }

    /** Waits for the next receive completion; throws on an error status or timeout. */
    public Completion receive() {
        Completion c = await(endpoint.recvQueue());
        if (!c.isSuccess()) {
            throw new CompletionException(c);
        }
        return c;
    }

    private long recvIds;

    private synchronized long nextRecvId() {
        return ++recvIds;
    }

    private void execute(WorkRequest request) {
        if (!endpoint.executeNow(request)) {
            check(request.wrId(), await(endpoint.sendQueue()));
        }
    }

    private Completion check(long wrId, Completion c) {
        if (!c.isSuccess() && c.wrId() < wrId) {
            throw new CompletionException(c); // an earlier unsignalled request failed (sendUnsignaled)
        }
        if (c.wrId() != wrId) {
            throw new FabricException("completion for wr " + c.wrId() + " while waiting for wr " + wrId
                    + ": is the send queue shared or used by another thread?");
        }
        if (!c.isSuccess()) {
            throw new CompletionException(c);
        }
        return c;
    }

    private Completion await(CompletionQueue cq) {
        try {
            Completion c = cq.take(timeout.toNanos(), TimeUnit.NANOSECONDS);
            if (c == null) {
                throw new FabricException("no completion within " + timeout + " on " + endpoint.peer());
            }
            return c;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new FabricException("interrupted while waiting for a completion", e);
        }
    }

    public MemorySegment scratch() {
        return scratch.segment();
    }

    @Override
    public void close() {
        scratch.close();
        arena.close();
    }
}
