package io.erda.protocol;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.zip.CRC32C;

/**
 * Body of {@link MessageType#REDO_PUT} (Redo Logging baseline, paper §5.1): the whole key-value pair travels in
 * the SEND and lands in the server's PM receive buffer, which is the redo entry. A DELETE is a REDO_PUT with the
 * delete flag and no value.
 *
 * <pre>
 *  0                   1                   2                   3
 *  0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1
 * +---------------------------------------------------------------+  0
 * |                    flags (bit 0: delete)                      |
 * +---------------------------------------------------------------+  4
 * |                          key length                           |
 * +---------------------------------------------------------------+  8
 * |                         value length                          |
 * +---------------------------------------------------------------+ 12
 * |      CRC32C over bytes [0, 12) and [24, 24 + key + value)     |
 * +---------------------------------------------------------------+ 16
 * |  sequence (u64): 0 as sent; the server stamps its acceptance  |
 * |  order here, in PM, before it acknowledges                    |
 * +---------------------------------------------------------------+ 24
 * |                   key bytes, value bytes ...                  |
 * </pre>
 *
 * The CRC leaves out itself and the sequence (written later, by the server), so the client can compute it once.
 */
public record RedoPutRequest(boolean delete, MemorySegment key, MemorySegment value, long sequence) {
    public static final int FLAGS_OFFSET = 0;
    public static final int KEY_LENGTH_OFFSET = 4;
    public static final int VALUE_LENGTH_OFFSET = 8;
    public static final int CRC_OFFSET = 12;
    public static final int SEQUENCE_OFFSET = 16;
    public static final int KEY_OFFSET = 24;
    public static final int FLAG_DELETE = 1;

    private static final ValueLayout.OfInt INT = MessageHeader.INT;
    private static final ValueLayout.OfLong LONG = MessageHeader.LONG;

    /** Body length for a key and value of these lengths. */
    public static long encodedLength(long keyLength, long valueLength) {
        return KEY_OFFSET + keyLength + valueLength;
    }

    /**
     * Encodes at {@code offset} (value null or empty for a delete) with sequence 0 and the CRC; returns the body
     * length.
     */
    public static int encode(MemorySegment s, long offset, MemorySegment key, MemorySegment value, boolean delete) {
        int keyLength = Math.toIntExact(key.byteSize());
        int valueLength = value == null ? 0 : Math.toIntExact(value.byteSize());
        s.set(INT, offset + FLAGS_OFFSET, delete ? FLAG_DELETE : 0);
        s.set(INT, offset + KEY_LENGTH_OFFSET, keyLength);
        s.set(INT, offset + VALUE_LENGTH_OFFSET, valueLength);
        s.set(LONG, offset + SEQUENCE_OFFSET, 0L);
        MemorySegment.copy(key, 0, s, offset + KEY_OFFSET, keyLength);
        if (valueLength > 0) {
            MemorySegment.copy(value, 0, s, offset + KEY_OFFSET + keyLength, valueLength);
        }
        s.set(INT, offset + CRC_OFFSET, crc(s, offset, keyLength, valueLength));
        return (int) encodedLength(keyLength, valueLength);
    }

    /** The CRC32C the body at {@code offset} should carry (see the layout). */
    public static int crc(MemorySegment s, long offset, int keyLength, int valueLength) {
        CRC32C crc = new CRC32C();
        crc.update(buffer(s, offset, CRC_OFFSET));
        crc.update(buffer(s, offset + KEY_OFFSET, (long) keyLength + valueLength));
        return (int) crc.getValue();
    }

    private static ByteBuffer buffer(MemorySegment s, long offset, long length) {
        return s.asSlice(offset, length).asByteBuffer().order(ByteOrder.LITTLE_ENDIAN);
    }

    /**
     * Decodes a received body, checking bounds and the CRC (a mismatch throws naming both values); key and value
     * are slices of {@code s}.
     */
    public static RedoPutRequest decode(MemorySegment s, long offset, int bodyLength, int maxKeyLength, int maxValueLength) {
        Body.require("REDO_PUT", KEY_OFFSET, bodyLength);
        int flags = s.get(INT, offset + FLAGS_OFFSET);
        int keyLength = Body.nonNegative("key length", s.get(INT, offset + KEY_LENGTH_OFFSET), maxKeyLength);
        int valueLength = Body.nonNegative("value length", s.get(INT, offset + VALUE_LENGTH_OFFSET), maxValueLength);
        Body.require("REDO_PUT key and value", encodedLength(keyLength, valueLength), bodyLength);
        boolean delete = (flags & FLAG_DELETE) != 0;
        if (delete && valueLength != 0) {
            throw new WireFormatException("REDO_PUT delete carries value length " + valueLength + ", expected 0");
        }
        int carried = s.get(INT, offset + CRC_OFFSET);
        int computed = crc(s, offset, keyLength, valueLength);
        if (carried != computed) {
            throw new WireFormatException(String.format("REDO_PUT CRC32C 0x%08x does not match 0x%08x computed over its"
                    + " %d-byte key and %d-byte value", carried, computed, keyLength, valueLength));
        }
        return new RedoPutRequest(delete, Body.slice(s, offset + KEY_OFFSET, keyLength),
                Body.slice(s, offset + KEY_OFFSET + keyLength, valueLength), s.get(LONG, offset + SEQUENCE_OFFSET));
    }
}
