package io.erda.protocol;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteOrder;

/**
 * Header of every two-sided message (little-endian).
 *
 * <pre>
 *  0                   1                   2                   3
 *  0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1
 * +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
 * |         magic 0xE7DA          |    version    |     type      |
 * +---------------------------------------------------------------+
 * |                          request id                           |
 * +-------------------------------+-------------------------------+
 * |            status             |             flags             |
 * +-------------------------------+-------------------------------+
 * |                          body length                          |
 * +---------------------------------------------------------------+
 * </pre>
 * A reply carries the request id of its request.
 */
public final class MessageHeader {
    public static final int MAGIC_OFFSET = 0;
    public static final int VERSION_OFFSET = 2;
    public static final int TYPE_OFFSET = 3;
    public static final int REQUEST_ID_OFFSET = 4;
    public static final int STATUS_OFFSET = 8;
    public static final int FLAGS_OFFSET = 10;
    public static final int BODY_LENGTH_OFFSET = 12;
    public static final int LENGTH = 16;

    public static final short MAGIC = (short) 0xE7DA;
    public static final byte VERSION = 1;

    static final ValueLayout.OfShort SHORT = ValueLayout.JAVA_SHORT_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);
    static final ValueLayout.OfInt INT = ValueLayout.JAVA_INT_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);
    static final ValueLayout.OfLong LONG = ValueLayout.JAVA_LONG_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);

    private MessageHeader() {
    }

    /** Writes a header at {@code offset}; returns the offset of the body. */
    public static long write(MemorySegment s, long offset, MessageType type, int requestId, WireStatus status, int flags, int bodyLength) {
        s.set(SHORT, offset + MAGIC_OFFSET, MAGIC);
        s.set(ValueLayout.JAVA_BYTE, offset + VERSION_OFFSET, VERSION);
        s.set(ValueLayout.JAVA_BYTE, offset + TYPE_OFFSET, (byte) type.code());
        s.set(INT, offset + REQUEST_ID_OFFSET, requestId);
        s.set(SHORT, offset + STATUS_OFFSET, (short) status.code());
        s.set(SHORT, offset + FLAGS_OFFSET, (short) flags);
        s.set(INT, offset + BODY_LENGTH_OFFSET, bodyLength);
        return offset + LENGTH;
    }

    /**
     * Checks the header of a message of {@code received} bytes: magic, version, known type, status, and that the
     * body length fits what was received. Throws {@link WireFormatException} naming what is wrong.
     */
    public static MessageType check(MemorySegment s, long offset, int received) {
        if (received < LENGTH) {
            throw new WireFormatException("message of " + received + " bytes is shorter than the " + LENGTH + "-byte header");
        }
        short magic = s.get(SHORT, offset + MAGIC_OFFSET);
        if (magic != MAGIC) {
            throw new WireFormatException("magic 0x" + Integer.toHexString(magic & 0xFFFF) + " is not 0xe7da");
        }
        byte version = s.get(ValueLayout.JAVA_BYTE, offset + VERSION_OFFSET);
        if (version != VERSION) {
            throw new WireFormatException("protocol version " + version + " is not " + VERSION);
        }
        int code = s.get(ValueLayout.JAVA_BYTE, offset + TYPE_OFFSET);
        MessageType type = MessageType.of(code);
        if (type == null) {
            throw new WireFormatException("message type " + code + " is unknown");
        }
        if (WireStatus.of(status(s, offset)) == null) {
            throw new WireFormatException("status " + status(s, offset) + " is unknown");
        }
        int body = bodyLength(s, offset);
        if (body < 0 || body > received - LENGTH) {
            throw new WireFormatException("body length " + body + " exceeds the " + (received - LENGTH) + " bytes received after the header");
        }
        return type;
    }

    public static MessageType type(MemorySegment s, long offset) {
        return MessageType.of(s.get(ValueLayout.JAVA_BYTE, offset + TYPE_OFFSET));
    }

    public static int requestId(MemorySegment s, long offset) {
        return s.get(INT, offset + REQUEST_ID_OFFSET);
    }

    public static int status(MemorySegment s, long offset) {
        return s.get(SHORT, offset + STATUS_OFFSET) & 0xFFFF;
    }

    public static int flags(MemorySegment s, long offset) {
        return s.get(SHORT, offset + FLAGS_OFFSET) & 0xFFFF;
    }

    public static int bodyLength(MemorySegment s, long offset) {
        return s.get(INT, offset + BODY_LENGTH_OFFSET);
    }
}
