package io.erda.server;

import io.erda.core.wire.MessageHeader;
import io.erda.core.wire.MessageType;
import io.erda.core.wire.WireStatus;
import io.erda.fabric.Completion;
import io.erda.fabric.Endpoint;
import io.erda.fabric.Fabric;
import io.erda.fabric.MemoryRegion;
import io.erda.fabric.RecvRequest;
import io.erda.fabric.WorkRequest;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.atomic.AtomicIntegerArray;
import java.util.function.Function;

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
 * registered for it alone and released on completion.
 */
final class Connection implements AutoCloseable {
    /** Writes a reply body at {@code offset} of {@code target}; returns its length. */
    @FunctionalInterface
    interface BodyWriter {
        int write(MemorySegment target, long offset);
    }

    private static final long OVERSIZED_WR_BASE = 1L << 40;

    private final Endpoint endpoint;
    private final ProtocolHandler handler;
    private final int slots;
    private final int slotSize;
    private final Arena arena = Arena.ofShared();
    private final ReceiveBuffers receives;
    private final MemoryRegion replies;
    private final boolean[] replyBusy;
    /** Holders of each receive slot (dispatcher, handler); the slot is posted again when the count drops to 0. */
    private final AtomicIntegerArray holds;
    private final Map<Long, Arena> oversized = new HashMap<>();
    private final Map<Long, MemoryRegion> oversizedRegions = new HashMap<>();
    private long nextOversized = OVERSIZED_WR_BASE;
    private boolean closed;

    Connection(Fabric fabric, Endpoint endpoint, Function<Connection, ProtocolHandler> handler, ReceiveBuffers receives,
               int replySize) {
        this.endpoint = endpoint;
        this.slots = receives.count();
        this.slotSize = replySize;
        this.receives = receives;
        this.replies = fabric.registerLocal(arena.allocate((long) slots * slotSize, 64));
        this.replyBusy = new boolean[slots];
        this.holds = new AtomicIntegerArray(slots);
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
        return receives.region().segment().asSlice(receives.offset(slot), receives.size());
    }

    /** The dispatcher is done with receive slot {@code slot}: posted again unless a handler retained it. */
    void repost(int slot) {
        release(slot);
    }

    /** Keeps receive slot {@code slot} from being posted again until {@link #release}. */
    void retain(int slot) {
        holds.incrementAndGet(slot);
    }

    /** Drops one hold of receive slot {@code slot}; the last one posts it again (not on a closed connection). */
    void release(int slot) {
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
        endpoint.postRecv(new RecvRequest(slot, receives.region(), receives.offset(slot), receives.size()));
    }

    synchronized boolean replySlotFree(int slot) {
        return !replyBusy[slot];
    }

    /** Sends a reply from reply slot {@code slot} (the caller waited for it to be free). */
    void reply(int slot, int requestId, MessageType type, WireStatus status, int maxBodyLength, BodyWriter body) {
        if (MessageHeader.LENGTH + (long) maxBodyLength > slotSize) {
            replyOversized(requestId, type, status, maxBodyLength, body);
            return;
        }
        MemorySegment target = replies.segment();
        long offset = (long) slot * slotSize;
        int length = body.write(target, offset + MessageHeader.LENGTH);
        MessageHeader.write(target, offset, type, requestId, status, 0, length);
        synchronized (this) {
            if (closed) {
                return;
            }
            replyBusy[slot] = true;
        }
        endpoint.post(WorkRequest.send(slot, replies, offset, MessageHeader.LENGTH + length));
    }

    private void replyOversized(int requestId, MessageType type, WireStatus status, int maxBodyLength, BodyWriter body) {
        Arena own = Arena.ofShared();
        MemorySegment buffer = own.allocate(MessageHeader.LENGTH + (long) maxBodyLength, 64);
        int length = body.write(buffer, MessageHeader.LENGTH);
        MessageHeader.write(buffer, 0, type, requestId, status, 0, length);
        MemoryRegion region = endpoint.fabric().registerLocal(buffer);
        long wrId;
        synchronized (this) {
            if (closed) {
                region.close();
                own.close();
                return;
            }
            wrId = nextOversized++;
            oversized.put(wrId, own);
            oversizedRegions.put(wrId, region);
        }
        endpoint.post(WorkRequest.send(wrId, region, 0, MessageHeader.LENGTH + length));
    }

    /** A send completion of this connection: frees its reply buffer. Returns false if it reports an error. */
    synchronized boolean sendCompleted(Completion c) {
        if (c.wrId() >= OVERSIZED_WR_BASE) {
            MemoryRegion region = oversizedRegions.remove(c.wrId());
            Arena own = oversized.remove(c.wrId());
            if (region != null) {
                region.close();
                own.close();
            }
        } else if (c.wrId() >= 0 && c.wrId() < slots) {
            replyBusy[(int) c.wrId()] = false;
        }
        return c.isSuccess();
    }

    /** Closes the endpoint (outstanding work flushes) and frees the buffers. Idempotent. */
    @Override
    public void close() {
        synchronized (this) {
            if (closed) {
                return;
            }
            closed = true;
        }
        endpoint.close();
        synchronized (this) {
            oversizedRegions.values().forEach(MemoryRegion::close);
            oversized.values().forEach(Arena::close);
            oversizedRegions.clear();
            oversized.clear();
        }
        receives.close();
        replies.close();
        arena.close();
    }

    @Override
    public String toString() {
        return "connection from " + endpoint.peer();
    }
}
