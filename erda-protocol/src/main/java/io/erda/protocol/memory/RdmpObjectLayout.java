package io.erda.protocol.memory;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;

/**
 * Layout of an RDMP-KV object in the server's PM pool (RDMP-KV §III-C, Fig. 6): a slot of a size class holding a
 * header, the key, the value and the two one-byte flags after the pair.
 *
 * <pre>
 *  0                   1                   2                   3
 *  0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1
 * +---------------------------------------------------------------+  0
 * |              Slot Length (its size class, bytes)              |
 * +-------------------------------+---------------+---------------+  4
 * |          Key Length           |  Kind (V/D)   |  Reserved (0) |
 * +-------------------------------+---------------+---------------+  8
 * |                         Value Length                          |
 * +---------------------------------------------------------------+ 12
 * |                         Reserved (0)                          |
 * +---------------------------------------------------------------+ 16
 * |              Sequence Number (u64; 0: the slot is free)       |
 * +---------------------------------------------------------------+ 24
 * |                         Key bytes                           ...
 * +---------------------------------------------------------------+
 * |                         Value bytes                         ...
 * +---------------+---------------+-------------------------------+
 * | Persist flag  |  Valid flag   |
 * +---------------+---------------+
 * </pre>
 *
 * <p>The slot length is written when the slot is carved and never changes, so a pool's carved slots can be walked
 * from its start. The sequence number is stored last, after the rest of the header and the zeroed flags are
 * persistent: it is the slot's log record (the paper's WAL entry of a PUT), and a nonzero one with a zero persist flag
 * is a PUT that never completed. A GET READs from {@link #SEQUENCE_OFFSET} through the valid flag
 * ({@link #readLength}) and accepts the value only with its expected sequence, its key and a valid flag of 1.
 */
public final class RdmpObjectLayout {
    public static final int SLOT_LENGTH_OFFSET = 0;
    public static final int KEY_LENGTH_OFFSET = 4;
    public static final int KIND_OFFSET = 6;
    public static final int VALUE_LENGTH_OFFSET = 8;
    public static final int SEQUENCE_OFFSET = 16;
    public static final int HEADER_LENGTH = 24;
    public static final int FLAGS_LENGTH = 2;
    public static final byte KIND_VALUE = 'V';
    public static final byte KIND_TOMBSTONE = 'D';
    public static final byte FLAG_SET = 1;

    private RdmpObjectLayout() {
    }

    /** Bytes of an object with these key and value lengths, flags included. */
    public static long length(int keyLength, int valueLength) {
        return HEADER_LENGTH + (long) keyLength + valueLength + FLAGS_LENGTH;
    }

    /** The value length of an object of {@code objectLength} bytes with a {@code keyLength}-byte key. */
    public static int valueLength(long objectLength, int keyLength) {
        return (int) (objectLength - HEADER_LENGTH - keyLength - FLAGS_LENGTH);
    }

    /** Offset of the value in the object. */
    public static long valueOffset(int keyLength) {
        return HEADER_LENGTH + (long) keyLength;
    }

    /** Offset of the persist flag in the object; the valid flag is the byte after it. */
    public static long persistFlagOffset(int keyLength, int valueLength) {
        return HEADER_LENGTH + (long) keyLength + valueLength;
    }

    public static long validFlagOffset(int keyLength, int valueLength) {
        return persistFlagOffset(keyLength, valueLength) + 1;
    }

    /** Bytes a GET READs, from {@link #SEQUENCE_OFFSET} through the valid flag. */
    public static int readLength(int keyLength, int valueLength) {
        return (int) (length(keyLength, valueLength) - SEQUENCE_OFFSET);
    }

    public static int slotLength(MemorySegment s, long object) {
        return s.get(Words.INT_U, object + SLOT_LENGTH_OFFSET);
    }

    public static int keyLength(MemorySegment s, long object) {
        return Short.toUnsignedInt(s.get(Words.SHORT_U, object + KEY_LENGTH_OFFSET));
    }

    public static byte kind(MemorySegment s, long object) {
        return s.get(ValueLayout.JAVA_BYTE, object + KIND_OFFSET);
    }

    public static int valueLength(MemorySegment s, long object) {
        return s.get(Words.INT_U, object + VALUE_LENGTH_OFFSET);
    }

    public static long sequence(MemorySegment s, long object) {
        return s.get(Words.LONG_U, object + SEQUENCE_OFFSET);
    }

    /**
     * Whether a GET's READ at {@code read} ({@link #readLength} bytes from the sequence number) holds the object it
     * was told of: that sequence number, that key and a valid flag of 1. Anything else is a PUT in progress or a slot
     * reused since the lookup: the GET asks again.
     */
    public static boolean readIsValid(MemorySegment read, long sequence, MemorySegment key, int valueLength) {
        int keyLength = (int) key.byteSize();
        long base = -SEQUENCE_OFFSET; // the READ starts at the sequence number
        return read.get(Words.LONG_U, 0) == sequence
                && read.get(ValueLayout.JAVA_BYTE, base + validFlagOffset(keyLength, valueLength)) == FLAG_SET
                && MemorySegment.mismatch(read, HEADER_LENGTH - SEQUENCE_OFFSET,
                        HEADER_LENGTH - SEQUENCE_OFFSET + keyLength, key, 0, keyLength) == -1;
    }

    /** Offset of the value in a GET's READ ({@link #readIsValid}). */
    public static long valueOffsetInRead(int keyLength) {
        return valueOffset(keyLength) - SEQUENCE_OFFSET;
    }
}
