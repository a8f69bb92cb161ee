package io.erda.server.request;

import io.erda.fabric.Completion;
import io.erda.fabric.Endpoint;
import io.erda.fabric.Fabric;
import io.erda.fabric.MemoryRegion;
import io.erda.fabric.RecvRequest;
import io.erda.fabric.WorkRequest;
import io.erda.protocol.BodyEncoder;
import io.erda.protocol.HeadArray;
import io.erda.protocol.HeadStateCredits;
import io.erda.protocol.MessageHeader;
import io.erda.protocol.MessageType;
import io.erda.protocol.WireStatus;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.atomic.AtomicIntegerArray;
import java.util.function.Function;
import java.util.function.Supplier;

/**
 * One client connection: its endpoint, its receive buffers and its reply buffers, and the protocol handler chosen
 * at connect time.
 *
 * <p><b>Buffers.</b> The {@link ReceiveBuffers} are posted at accept; a request in receive slot {@code i} is answered
 * from reply slot {@code i} (of {@code replySize} bytes), then receive slot {@code i} is posted again once nobody
 * holds it: the dispatcher holds a slot while it handles the message, and a handler may {@link #retain} it longer
 * (a redo entry lives in its receive buffer until it is applied) and {@link #release} it later, from any thread. A reply
 * slot is reused only once the SEND that last used it has completed (signalled SENDs; any worker draining the shared
 * send queue marks slots free). A reply larger than a slot (a big two-sided GET value) goes out of a buffer
 * registered for it alone and released on completion; so does an unsolicited HEAD_STATE.
 *
 * <p><b>Send queue.</b> Posting more SENDs than the endpoint's send depth fails (as on verbs, where the post finds
 * the queue full), and a SEND leaves the queue when its completion is made, not when the client has read it: a
 * client can read a reply and send its next request before the server's completion of that reply exists (on tcp the
 * acknowledgement travels on its own thread, which a loaded host may hold back). So every SEND is counted until its
 * completion: a reply waits for room ({@link #canReply}, drained by the caller), and a notification that finds
 * none is remembered and sent on the next completion or request. Notifications leave room for a reply to every
 * receive slot, so one never takes the room a reply found between the dispatcher's check and its post (a client
 * has one request outstanding on a connection: one dispatcher replies at a time).
 *
 * <p><b>Head state notifications</b> (paper §4.4). Connections of the Erda protocol are told of every head state
 * change with a HEAD_STATE carrying the head array, within the credits of {@link HeadStateCredits}: requests
 * acknowledge what the client processed; a change that finds no credit is sent (as the then-current array) once a
 * request returns credit.
 */
public final class ServerConnection implements AutoCloseable {
    private static final long OVERSIZED_WR_BASE = 1L << 40;

    private final Endpoint endpoint;
    private final ProtocolHandler handler;
    /** The head array to notify, or null for protocols that take no HEAD_STATE. */
    private final Supplier<HeadArray> headStates;
    private final int slots;
    private final int slotSize;
    /** SENDs this connection may have posted and not yet seen complete: the endpoint's send depth. */
    private final int sendDepth;
    /** SENDs posted and not yet completed (reply slots and own buffers). */
    private int sendsOutstanding;
    private final Arena arena = Arena.ofShared();
    private final ReceiveBuffers receives;
    private final MemoryRegion replies;
    private final boolean[] replyBusy;
    /** Holders of each receive slot (dispatcher, handler); the slot is posted again when the count drops to 0. */
    private final AtomicIntegerArray holds;
    /** Each receive slot's posting and bytes, made once: a request allocates neither. */
    private final RecvRequest[] receiveRequests;
    private final MemorySegment[] receivedSlots;
    private final Map<Long, Arena> oversized = new HashMap<>();
    private final Map<Long, MemoryRegion> oversizedRegions = new HashMap<>();
    private long nextOversized = OVERSIZED_WR_BASE;
    private boolean closed;
    private int headStatesSent;
    private int headStatesAcknowledged;
    private boolean headStatePending;

    /**
     * {@code handler} makes this connection's protocol handler (a redo-log handler needs the connection to retain
     * its receive slots); {@code headStates} is the head array to notify, null for protocols that take no
     * HEAD_STATE (the baselines: their clients post no receives for it).
     */
    ServerConnection(Fabric fabric, Endpoint endpoint, int sendDepth, Function<ServerConnection, ProtocolHandler> handler,
               Supplier<HeadArray> headStates, ReceiveBuffers receives, int replySize) {
        if (sendDepth <= receives.count()) {
            throw new IllegalArgumentException("send depth " + sendDepth + " must exceed the " + receives.count()
                    + " receive slots (a reply for each, and room for own-buffer replies and notifications)");
        }
        this.endpoint = endpoint;
        this.sendDepth = sendDepth;
        this.headStates = headStates;
        this.slots = receives.count();
        this.slotSize = replySize;
        this.receives = receives;
        this.replies = fabric.registerLocal(arena.allocate((long) slots * slotSize, 64));
        this.replyBusy = new boolean[slots];
        this.holds = new AtomicIntegerArray(slots);
        this.receiveRequests = new RecvRequest[slots];
        this.receivedSlots = new MemorySegment[slots];
        for (int slot = 0; slot < slots; slot++) {
            receiveRequests[slot] = new RecvRequest(slot, receives.region(), receives.offset(slot), receives.size());
            receivedSlots[slot] = receives.region().segment().asSlice(receives.offset(slot), receives.size());
        }
        this.handler = handler.apply(this);
    }

    Endpoint endpoint() {
        return endpoint;
    }

    ProtocolHandler handler() {
        return handler;
    }

    void postReceives() {
        for (int slot = 0; slot < slots; slot++) {
            post(slot);
        }
    }

    /** The bytes received into receive slot {@code slot}. */
    MemorySegment received(int slot) {
        return receivedSlots[slot];
    }

    /** The dispatcher is done with receive slot {@code slot}: posted again unless a handler retained it. */
    void repost(int slot) {
        release(slot);
    }

    /** Keeps receive slot {@code slot} from being posted again until {@link #release}. */
    public void retain(int slot) {
        holds.incrementAndGet(slot);
    }

    /** Drops one hold of receive slot {@code slot}; the last one posts it again (not on a closed connection). */
    public void release(int slot) {
        if (holds.decrementAndGet(slot) == 0) {
            synchronized (this) {
                if (closed) {
                    return;
                }
                post(slot);
            }
        }
    }

    private void post(int slot) {
        holds.set(slot, 1); // the dispatcher's, for the message that will arrive in it
        endpoint.postRecv(receiveRequests[slot]);
    }

    /**
     * Whether a reply of at most {@code maxBodyLength} bytes to the request in {@code slot} can be posted now: its
     * reply slot is free (a reply that fits one) and the send queue has room.
     */
    synchronized boolean canReply(int slot, int maxBodyLength) {
        return sendsOutstanding < sendDepth && (ownBuffer(maxBodyLength) || !replyBusy[slot]);
    }

    private boolean ownBuffer(int maxBodyLength) {
        return MessageHeader.LENGTH + (long) maxBodyLength > slotSize;
    }

    /** Sends a reply from reply slot {@code slot} (the caller waited until {@link #canReply}). */
    void reply(int slot, int requestId, MessageType type, WireStatus status, int maxBodyLength, BodyEncoder body) {
        if (ownBuffer(maxBodyLength)) {
            sendOwnBuffer(requestId, type, status, maxBodyLength, body);
            return;
        }
        MemorySegment target = replies.segment();
        long offset = (long) slot * slotSize;
        int length = body.encode(target, offset + MessageHeader.LENGTH);
        MessageHeader.write(target, offset, type, requestId, status, 0, length);
        synchronized (this) {
            if (closed) {
                return;
            }
            replyBusy[slot] = true;
            sendsOutstanding++;
            // posted under the monitor: the tcp provider copies out of the buffer on the posting thread, and close()
            // must not free the buffers mid-copy (a cleaner thread notifying races a worker closing)
            endpoint.post(WorkRequest.send(slot, replies, offset, MessageHeader.LENGTH + length));
        }
    }

    /**
     * Tells the client the head array changed, if it has credit; otherwise remembers to. Returns the count whose
     * acknowledgement says the client has it ({@link #acknowledged}). The array is taken and the
     * SEND posted under this connection's monitor, so notifications leave in the order of the arrays they carry.
     */
    synchronized int notifyHeadState() {
        if (headStates == null || closed) {
            return headStatesAcknowledged;
        }
        Endpoint.State state = endpoint.state();
        if (state == Endpoint.State.IDLE || state == Endpoint.State.CONNECTING) {
            // still being accepted: a SEND would fail the endpoint (and the connection with it), and its client has
            // sent nothing yet, so the HELLO it sends once connected is answered with the array as changed
            return headStatesAcknowledged;
        }
        if (HeadStateCredits.outstanding(headStatesSent, headStatesAcknowledged) >= HeadStateCredits.CREDITS
                || sendsOutstanding >= sendDepth - slots) {
            headStatePending = true;
            return headStatesSent + 1;
        }
        headStatesSent++;
        headStatePending = false;
        HeadArray heads = headStates.get();
        sendOwnBuffer(0, MessageType.HEAD_STATE, WireStatus.OK, heads.encodedLength(), heads::encode);
        return headStatesSent;
    }

    /**
     * Whether the client acknowledged the {@code count}-th notification (returned by {@link #notifyHeadState}), or
     * the connection is gone. A client acknowledges at its next request, so an operation it began before it
     * processed that notification has ended by then (it processes notifications between operations).
     */
    synchronized boolean acknowledged(int count) {
        return closed || HeadStateCredits.covers(headStatesAcknowledged, count);
    }

    /** A request's header flags: the client's count of processed notifications; sends a pending one it makes room for. */
    void headStatesProcessed(int flags) {
        if (headStates == null) {
            return; // no notifications on this protocol: nothing to acknowledge, no monitor to take per request
        }
        synchronized (this) {
            headStatesAcknowledged = flags;
            if (headStatePending) {
                notifyHeadState();
            }
        }
    }

    private void sendOwnBuffer(int requestId, MessageType type, WireStatus status, int maxBodyLength,
                               BodyEncoder body) {
        Arena own = Arena.ofShared();
        MemorySegment buffer = own.allocate(MessageHeader.LENGTH + (long) maxBodyLength, 64);
        int length = body.encode(buffer, MessageHeader.LENGTH);
        MessageHeader.write(buffer, 0, type, requestId, status, 0, length);
        synchronized (this) {
            if (closed) {
                own.close();
                return;
            }
            MemoryRegion region = endpoint.fabric().registerLocal(buffer);
            long wrId = nextOversized++;
            oversized.put(wrId, own);
            oversizedRegions.put(wrId, region);
            sendsOutstanding++;
            endpoint.post(WorkRequest.send(wrId, region, 0, MessageHeader.LENGTH + length)); // under the monitor: see reply
        }
    }

    /**
     * A send completion of this connection: frees its reply buffer, and sends a notification that waited for room.
     * Returns false if it reports an error.
     */
    synchronized boolean sendCompleted(Completion c) {
        if (c.wrId() >= OVERSIZED_WR_BASE) {
            MemoryRegion region = oversizedRegions.remove(c.wrId());
            Arena own = oversized.remove(c.wrId());
            if (region != null) {
                region.close();
                own.close();
                sendsOutstanding--;
            }
        } else if (c.wrId() >= 0 && c.wrId() < slots && replyBusy[(int) c.wrId()]) {
            replyBusy[(int) c.wrId()] = false;
            sendsOutstanding--;
        }
        if (headStatePending && c.isSuccess()) {
            notifyHeadState();
        }
        return c.isSuccess();
    }

    /** Closes the endpoint (outstanding work flushes) and frees the buffers, never during a post. Idempotent. */
    @Override
    public synchronized void close() {
        if (closed) {
            return;
        }
        closed = true;
        endpoint.close();
        oversizedRegions.values().forEach(MemoryRegion::close);
        oversized.values().forEach(Arena::close);
        oversizedRegions.clear();
        oversized.clear();
        receives.close();
        replies.close();
        arena.close();
    }

    @Override
    public String toString() {
        return "connection from " + endpoint.peer();
    }
}
