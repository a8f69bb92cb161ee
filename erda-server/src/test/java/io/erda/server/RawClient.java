package io.erda.server;

import io.erda.fabric.Completion;
import io.erda.fabric.Endpoint;
import io.erda.fabric.Fabric;
import io.erda.fabric.MemoryRegion;
import io.erda.fabric.SyncEndpoint;
import io.erda.protocol.BodyEncoder;
import io.erda.protocol.ConnectData;
import io.erda.protocol.ErrorReply;
import io.erda.protocol.FlushRequest;
import io.erda.protocol.GetReply;
import io.erda.protocol.HeadArray;
import io.erda.protocol.KeyRequest;
import io.erda.protocol.MessageHeader;
import io.erda.protocol.MessageType;
import io.erda.protocol.PutReply;
import io.erda.protocol.PutRequest;
import io.erda.protocol.RawReserveReply;
import io.erda.protocol.RedoPutRequest;
import io.erda.protocol.RepairHintReply;
import io.erda.protocol.StoreInfo;
import io.erda.protocol.WireStatus;
import io.erda.protocol.memory.ObjectLayout;
import io.erda.protocol.memory.RingSlotLayout;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.time.Duration;

/** A test client speaking the wire protocol by hand over one endpoint: what the client library will do, unabstracted. */
final class RawClient implements AutoCloseable {
    static final int BUFFER = 256 << 10;
    private static final int RECEIVES = 4;
    private static final long SEND_AT = (long) RECEIVES * BUFFER;
    private static final long DATA_AT = SEND_AT + BUFFER;
    /** As {@code ReadAfterWriteClient.MAX_ATTEMPTS}. */
    private static final int RAW_PUT_ATTEMPTS = 4;

    /** A reply: header fields and a copy of the body. */
    record Reply(MessageType type, int requestId, WireStatus status, MemorySegment body) {
        String error() {
            return ErrorReply.decode(body, 0, (int) body.byteSize());
        }
    }

    private final Fabric fabric;
    private final Endpoint endpoint;
    private final SyncEndpoint sync;
    private final Arena arena = Arena.ofShared();
    private final MemoryRegion buffer;
    private int nextRequestId = 1;

    private RawClient(URI uri, int protocol) {
        fabric = Fabric.open(uri);
        endpoint = fabric.createEndpoint();
        buffer = fabric.registerLocal(arena.allocate(DATA_AT + BUFFER, 64));
        sync = new SyncEndpoint(endpoint, Duration.ofSeconds(20));
        for (int i = 0; i < RECEIVES; i++) {
            sync.postRecv(buffer, (long) i * BUFFER, BUFFER);
        }
        endpoint.connect(uri, new ConnectData(protocol).encode());
    }

    static RawClient connect(URI uri) {
        return new RawClient(uri, ConnectData.PROTOCOL_ERDA);
    }

    static RawClient connect(URI uri, int protocol) {
        return new RawClient(uri, protocol);
    }

    Endpoint endpoint() {
        return endpoint;
    }

    /** Sends a request with the body {@code writer} produces and waits for its reply. */
    Reply call(MessageType type, BodyEncoder writer) {
        MemorySegment s = buffer.segment();
        int length = writer.encode(s, SEND_AT + MessageHeader.LENGTH);
        int id = nextRequestId++;
        MessageHeader.write(s, SEND_AT, type, id, WireStatus.OK, 0, length);
        return sendRaw(MessageHeader.LENGTH + length);
    }

    /** Sends {@code message} as is and waits for a reply. */
    Reply raw(byte[] message) {
        MemorySegment.copy(message, 0, buffer.segment(), ValueLayout.JAVA_BYTE, SEND_AT, message.length);
        return sendRaw(message.length);
    }

    private Reply sendRaw(int length) {
        sync.send(buffer, SEND_AT, length);
        return receive();
    }

    /** Waits for the next message from the server (a reply, or a notification such as HEAD_STATE). */
    Reply receive() {
        Completion c = sync.receive();
        long at = c.wrId() - 1 >= 0 ? (c.wrId() - 1) % RECEIVES * BUFFER : 0;
        MemorySegment s = buffer.segment();
        MessageType type = MessageHeader.check(s.asSlice(at), 0, c.byteLength());
        Reply reply = new Reply(type, MessageHeader.requestId(s, at), WireStatus.of(MessageHeader.status(s, at)),
                MemorySegment.ofArray(s.asSlice(at + MessageHeader.LENGTH, MessageHeader.bodyLength(s, at))
                        .toArray(ValueLayout.JAVA_BYTE)));
        sync.postRecv(buffer, at, BUFFER);
        return reply;
    }

    StoreInfo hello() {
        Reply r = call(MessageType.HELLO, BodyEncoder.EMPTY);
        return StoreInfo.decode(r.body(), 0, (int) r.body().byteSize());
    }

    Reply put(byte[] key, int valueLength, boolean delete) {
        return call(MessageType.PUT, new PutRequest(delete, valueLength, MemorySegment.ofArray(key))::encode);
    }

    static PutReply putReply(Reply r) {
        return PutReply.decode(r.body(), 0, (int) r.body().byteSize());
    }

    /** Writes the object of a reservation with one one-sided WRITE. */
    void writeObject(PutReply where, byte[] key, byte[] value, boolean tombstone) {
        long length = ObjectLayout.encode(buffer.segment(), DATA_AT, MemorySegment.ofArray(key), MemorySegment.ofArray(value),
                tombstone);
        sync.write(buffer, DATA_AT, (int) length, where.address(), where.rkey());
    }

    /** PUT, then the one-sided WRITE; returns the reservation. */
    PutReply putAndWrite(byte[] key, byte[] value) {
        Reply r = put(key, value.length, false);
        if (r.status() != WireStatus.OK) {
            throw new AssertionError("PUT failed: " + r.status() + " " + r.error());
        }
        PutReply where = putReply(r);
        writeObject(where, key, value, false);
        return where;
    }

    /**
     * The read-after-write method: a one-sided FLUSH (a READ where the provider has none) of the object a
     * reservation's WRITE placed, on this connection.
     */
    void fence(PutReply where) {
        sync.flush(where.address(), where.objectLength(), where.rkey());
    }

    /** Redo Logging: key, value and CRC in one REDO_PUT (value null: a delete). */
    Reply redoPut(byte[] key, byte[] value) {
        return call(MessageType.REDO_PUT, (s, o) -> RedoPutRequest.encode(s, o, MemorySegment.ofArray(key),
                value == null ? null : MemorySegment.ofArray(value), value == null));
    }

    /** Read After Write: RAW_RESERVE only (the slot is not written). */
    RawReserveReply rawReserve(byte[] key, int valueLength) {
        Reply r = call(MessageType.RAW_RESERVE, new PutRequest(false, valueLength, MemorySegment.ofArray(key))::encode);
        if (r.status() != WireStatus.OK) {
            throw new AssertionError("RAW_RESERVE failed: " + r.status() + " " + r.error());
        }
        return RawReserveReply.decode(r.body(), 0, (int) r.body().byteSize());
    }

    /**
     * Read After Write as {@code ReadAfterWriteClient} does it: reserve a ring slot, WRITE the object into it, READ
     * it back to force it, and all of it again while that took longer than the slot's lease (the poller may have
     * recycled the slot unapplied). Returns the attempts it took. An attempt that took longer than the lease was
     * applied if its WRITE landed before the poller's look after the deadline, else recycled.
     */
    int rawPut(byte[] key, byte[] value) {
        for (int attempt = 1; attempt <= RAW_PUT_ATTEMPTS; attempt++) {
            long start = System.nanoTime();
            RawReserveReply slot = rawReserve(key, value.length);
            rawWriteSlot(slot, key, value);
            if (System.nanoTime() - start <= slot.leaseNanos()) {
                return attempt;
            }
        }
        throw new AssertionError("RAW PUT outlived its slot's lease " + RAW_PUT_ATTEMPTS + " times");
    }

    /** Read After Write: WRITE the object into a slot reserved earlier (late, perhaps), READ it back to force it. */
    void rawWriteSlot(RawReserveReply slot, byte[] key, byte[] value) {
        long length = ObjectLayout.encode(buffer.segment(), DATA_AT + RingSlotLayout.HEADER_LENGTH,
                MemorySegment.ofArray(key), MemorySegment.ofArray(value), false);
        RingSlotLayout.seal(buffer.segment(), DATA_AT, slot.position(), length);
        int slotLength = RingSlotLayout.HEADER_LENGTH + (int) length;
        sync.write(buffer, DATA_AT, slotLength, slot.address(), slot.rkey());
        sync.flush(slot.address(), slotLength, slot.rkey());
    }

    /** One-sided READ of {@code length} bytes; returns a copy. */
    byte[] read(long address, int rkey, int length) {
        sync.read(buffer, DATA_AT, length, address, rkey);
        return buffer.segment().asSlice(DATA_AT, length).toArray(ValueLayout.JAVA_BYTE);
    }

    Reply get(byte[] key) {
        return call(MessageType.GET, new KeyRequest(MemorySegment.ofArray(key))::encode);
    }

    /** The value a two-sided GET returns, or null for NOT_FOUND. */
    String getString(byte[] key) {
        Reply r = get(key);
        if (r.status() == WireStatus.NOT_FOUND) {
            return null;
        }
        if (r.status() != WireStatus.OK) {
            throw new AssertionError("GET failed: " + r.status() + " " + r.error());
        }
        GetReply g = GetReply.decode(r.body(), 0, (int) r.body().byteSize());
        return new String(g.value().toArray(ValueLayout.JAVA_BYTE), StandardCharsets.UTF_8);
    }

    Reply flush(int head, long chainOffset, int length) {
        return call(MessageType.FLUSH, new FlushRequest(head, chainOffset, length)::encode);
    }

    HeadArray heads() {
        Reply r = call(MessageType.HEADS, BodyEncoder.EMPTY);
        return HeadArray.decode(r.body(), 0, (int) r.body().byteSize());
    }

    RepairHintReply.Outcome repairHint(byte[] key) {
        Reply r = call(MessageType.REPAIR_HINT, new KeyRequest(MemorySegment.ofArray(key))::encode);
        return RepairHintReply.decode(r.body(), 0, (int) r.body().byteSize()).outcome();
    }

    String stats() {
        Reply r = call(MessageType.STATS, BodyEncoder.EMPTY);
        return new String(r.body().toArray(ValueLayout.JAVA_BYTE), StandardCharsets.UTF_8);
    }

    @Override
    public void close() {
        sync.close();
        endpoint.close();
        buffer.close();
        fabric.close();
        arena.close();
    }
}
