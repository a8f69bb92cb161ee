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

/**
 * One client connection: its endpoint, its receive buffers and its reply buffers, and the protocol handler chosen
 * at connect time.
 *
 * <p><b>Buffers.</b> {@code slots} receive buffers of {@code slotSize} bytes are posted at accept; a request in
 * receive slot {@code i} is answered from reply slot {@code i}, then receive slot {@code i} is posted again. A reply
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
    private final MemoryRegion receives;
    private final MemoryRegion replies;
    private final boolean[] replyBusy;
    private final Map<Long, Arena> oversized = new HashMap<>();
    private final Map<Long, MemoryRegion> oversizedRegions = new HashMap<>();
    private long nextOversized = OVERSIZED_WR_BASE;
    private boolean closed;

    Connection(Fabric fabric, Endpoint endpoint, ProtocolHandler handler, int slots, int slotSize) {
        this.endpoint = endpoint;
        this.handler = handler;
        this.slots = slots;
        this.slotSize = slotSize;
        this.receives = fabric.registerLocal(arena.allocate((long) slots * slotSize, 64));
        this.replies = fabric.registerLocal(arena.allocate((long) slots * slotSize, 64));
        this.replyBusy = new boolean[slots];
    }

    Endpoint endpoint() {
        return endpoint;
    }

    ProtocolHandler handler() {
        return handler;
    }

    void postReceives() {
        for (int slot = 0; slot < slots; slot++) {
            repost(slot);
        }
    }

    /** The bytes received into receive slot {@code slot}. */
    MemorySegment received(int slot) {
        return receives.segment().asSlice((long) slot * slotSize, slotSize);
    }

    void repost(int slot) {
        endpoint.postRecv(new RecvRequest(slot, receives, (long) slot * slotSize, slotSize));
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
