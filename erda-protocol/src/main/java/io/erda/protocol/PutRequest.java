package io.erda.protocol;

import java.lang.foreign.MemorySegment;

import static io.erda.protocol.MessageHeader.INT;

/**
 * Body of {@link MessageType#PUT}: reserve room for an object (a value, or a tombstone when {@code delete}).
 *
 * <pre>
 * +---------------------------------------------------------------+
 * |        flags (bit 0: delete, bit 1: replica reservation)      |
 * +---------------------------------------------------------------+
 * |                          key length                           |
 * +---------------------------------------------------------------+
 * |                         value length                          |
 * +---------------------------------------------------------------+
 * |     assignment (replica reservations; zero otherwise)        |
 * +---------------------------------------------------------------+
 * |                       key bytes ...                           |
 * +---------------------------------------------------------------+
 * |  replica reservations only: the sender's session (8 bytes) and |
 * |  its tag (16 bytes), {@link ReplicaSender}                     |
 * </pre>
 */
/**
 * A <em>replica</em> reservation is one a clustered primary forwards to the shard's backup: the backup reserves as
 * for any PUT, and the client that asked the primary WRITEs there too (docs/ARCHITECTURE.md, [cluster]). Its
 * {@code assignment} is the shard map epoch that made the receiver the shard's backup, as the primary's map has it:
 * the backup accepts it only if its own map says the same, so neither side acts on a map older than the other's. Its
 * {@code sender} says which primary forwards it ({@link ReplicaSender}); null on every other reservation.
 */
public record PutRequest(boolean delete, int valueLength, MemorySegment key, boolean replica, int assignment,
                         ReplicaSender sender) {
    public static final int FLAGS_OFFSET = 0;
    public static final int KEY_LENGTH_OFFSET = 4;
    public static final int VALUE_LENGTH_OFFSET = 8;
    public static final int ASSIGNMENT_OFFSET = 12;
    public static final int KEY_OFFSET = 16;
    public static final int FLAG_DELETE = 1;
    public static final int FLAG_REPLICA = 2;

    /** A client's reservation (not a replica one). */
    public PutRequest(boolean delete, int valueLength, MemorySegment key) {
        this(delete, valueLength, key, false, 0, null);
    }

    /** A replica reservation, forwarded by {@code sender} under the map assignment {@code assignment}. */
    public static PutRequest replica(boolean delete, int valueLength, MemorySegment key, int assignment,
                                     ReplicaSender sender) {
        return new PutRequest(delete, valueLength, key, true, assignment, sender);
    }

    public PutRequest {
        if (replica != (sender != null)) {
            throw new IllegalArgumentException(replica ? "a replica reservation without its sender"
                    : "a sender on a reservation that is not a replica one");
        }
        if (!replica && assignment != 0) {
            throw new IllegalArgumentException("assignment " + assignment + " on a reservation that is not a replica one");
        }
        if (assignment < 0) {
            throw new IllegalArgumentException("assignment " + assignment + " is negative");
        }
    }

    public int encodedLength() {
        return KEY_OFFSET + (int) key.byteSize() + (replica ? ReplicaSender.LENGTH : 0);
    }

    /** Encodes at {@code offset}; returns the body length. */
    public int encode(MemorySegment s, long offset) {
        s.set(INT, offset + FLAGS_OFFSET, (delete ? FLAG_DELETE : 0) | (replica ? FLAG_REPLICA : 0));
        s.set(INT, offset + KEY_LENGTH_OFFSET, (int) key.byteSize());
        s.set(INT, offset + VALUE_LENGTH_OFFSET, valueLength);
        s.set(INT, offset + ASSIGNMENT_OFFSET, assignment);
        MemorySegment.copy(key, 0, s, offset + KEY_OFFSET, key.byteSize());
        if (replica) {
            long at = offset + KEY_OFFSET + key.byteSize();
            s.set(MessageHeader.LONG, at, sender.session());
            s.set(MessageHeader.LONG, at + 8, sender.tagHigh());
            s.set(MessageHeader.LONG, at + 16, sender.tagLow());
        }
        return encodedLength();
    }

    /** Decodes a received body; the key is a slice of {@code s}, not a copy. */
    public static PutRequest decode(MemorySegment s, long offset, int bodyLength, int maxKeyLength, int maxValueLength) {
        Body.require("PUT", KEY_OFFSET, bodyLength);
        int flags = s.get(INT, offset + FLAGS_OFFSET);
        int keyLength = Body.nonNegative("key length", s.get(INT, offset + KEY_LENGTH_OFFSET), maxKeyLength);
        int valueLength = Body.nonNegative("value length", s.get(INT, offset + VALUE_LENGTH_OFFSET), maxValueLength);
        Body.require("PUT key", (long) KEY_OFFSET + keyLength, bodyLength);
        boolean delete = (flags & FLAG_DELETE) != 0;
        if (delete && valueLength != 0) {
            throw new WireFormatException("DELETE carries value length " + valueLength + ", expected 0");
        }
        boolean replica = (flags & FLAG_REPLICA) != 0;
        int assignment = s.get(INT, offset + ASSIGNMENT_OFFSET);
        if (assignment < 0 || !replica && assignment != 0) {
            throw new WireFormatException("PUT carries assignment " + assignment + (replica ? ", negative"
                    : " on a reservation that is not a replica one, expected 0"));
        }
        ReplicaSender sender = null;
        if (replica) {
            long at = (long) KEY_OFFSET + keyLength;
            Body.require("replica PUT sender", at + ReplicaSender.LENGTH, bodyLength);
            sender = new ReplicaSender(s.get(MessageHeader.LONG, offset + at), s.get(MessageHeader.LONG, offset + at + 8),
                    s.get(MessageHeader.LONG, offset + at + 16));
        }
        return new PutRequest(delete, valueLength, Body.slice(s, offset + KEY_OFFSET, keyLength), replica, assignment,
                sender);
    }
}
