package io.erda.protocol.memory;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.zip.CRC32C;

/**
 * Layout of a log object (paper §3.2.1, Figs. 2 and 3), 8-byte aligned.
 *
 * <pre>
 *  0                   1                   2                   3
 *  0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1
 * +---------------+---------------+-------------------------------+  0
 * |  Type ('O'/'D')|  Reserved (0) |          Key Length           |
 * +---------------+---------------+-------------------------------+  4
 * |                            CRC32C                             |
 * +---------------------------------------------------------------+  8
 * |                         Value Length                          |
 * +---------------------------------------------------------------+ 12
 * |                         Key bytes                           ...
 * +---------------------------------------------------------------+
 * |                         Value bytes                         ...
 * +---------------------------------------------------------------+
 * |                  Zero padding to 8 bytes                    ...
 * +---------------------------------------------------------------+
 * </pre>
 *
 * <p>The type byte is the delete tag ('D' = tombstone, no value) and a nonzero marker at once, so a
 * zero-filled area never validates whatever its CRC. The CRC covers every byte of the padded object
 * except the CRC field itself, so a flip anywhere, padding included, is detected. Lengths are
 * checked against the bytes available before any CRC is computed: garbage never reads out of range.
 * Header: 12 bytes (the paper's 5 bytes of tag and CRC, plus explicit lengths and a marker).
 */
public final class ObjectLayout {
    public static final int TYPE_OFFSET = 0;
    public static final int RESERVED_OFFSET = 1;
    public static final int KEY_LENGTH_OFFSET = 2;
    public static final int CRC_OFFSET = 4;
    public static final int CRC_LENGTH = 4;
    public static final int VALUE_LENGTH_OFFSET = 8;
    public static final int HEADER_LENGTH = 12;
    public static final int ALIGNMENT = 8;

    public static final byte TYPE_OBJECT = 'O';
    public static final byte TYPE_TOMBSTONE = 'D';
    public static final int MAX_KEY_LENGTH = 0xFFFF;

    private ObjectLayout() {
    }

    /** Padded length of an object with these key and value lengths; throws naming the bad length. */
    public static long length(int keyLength, int valueLength) {
        checkKeyLength(keyLength);
        if (valueLength < 0) {
            throw new IllegalArgumentException("value length " + valueLength + " is negative");
        }
        return align(HEADER_LENGTH + (long) keyLength + valueLength);
    }

    public static void checkKeyLength(int keyLength) {
        if (keyLength < 1 || keyLength > MAX_KEY_LENGTH) {
            throw new IllegalArgumentException("key length " + keyLength + " outside [1, " + MAX_KEY_LENGTH + "]");
        }
    }

    public static long align(long length) {
        return (length + ALIGNMENT - 1) & -ALIGNMENT;
    }

    /**
     * Writes a complete object (header, key, value, padding, CRC last) at {@code offset}; a tombstone
     * takes an empty value. Returns the padded length.
     */
    public static long encode(MemorySegment target, long offset, MemorySegment key, MemorySegment value, boolean tombstone) {
        int keyLength = Math.toIntExact(key.byteSize());
        int valueLength = Math.toIntExact(value.byteSize());
        if (tombstone && valueLength != 0) {
            throw new IllegalArgumentException("tombstone value length " + valueLength + ", expected 0");
        }
        long total = length(keyLength, valueLength);
        MemorySegment object = target.asSlice(offset, total);
        object.set(ValueLayout.JAVA_BYTE, TYPE_OFFSET, tombstone ? TYPE_TOMBSTONE : TYPE_OBJECT);
        object.set(ValueLayout.JAVA_BYTE, RESERVED_OFFSET, (byte) 0);
        object.set(Words.SHORT_U, KEY_LENGTH_OFFSET, (short) keyLength);
        object.set(Words.INT_U, VALUE_LENGTH_OFFSET, valueLength);
        MemorySegment.copy(key, 0, object, HEADER_LENGTH, keyLength);
        MemorySegment.copy(value, 0, object, HEADER_LENGTH + keyLength, valueLength);
        long used = HEADER_LENGTH + (long) keyLength + valueLength;
        object.asSlice(used, total - used).fill((byte) 0);
        object.set(Words.INT_U, CRC_OFFSET, crc(object));
        return total;
    }

    /** CRC32C of {@code object} (exactly one padded object) skipping the CRC field. */
    public static int crc(MemorySegment object) {
        CRC32C crc = new CRC32C();
        crc.update(object.asSlice(0, CRC_OFFSET).asByteBuffer());
        crc.update(object.asSlice(CRC_OFFSET + CRC_LENGTH).asByteBuffer());
        return (int) crc.getValue();
    }

    /**
     * Checks the bytes at {@code offset} of which at most {@code available} may be read. Never throws
     * on garbage content; {@code expectedKey} may be null to accept any key (scans).
     */
    public static ObjectCheck validate(MemorySegment segment, long offset, long available, MemorySegment expectedKey) {
        long readable = Math.min(available, segment.byteSize() - offset);
        if (offset < 0 || readable < HEADER_LENGTH) {
            return ObjectCheck.TRUNCATED;
        }
        byte type = segment.get(ValueLayout.JAVA_BYTE, offset + TYPE_OFFSET);
        if (type != TYPE_OBJECT && type != TYPE_TOMBSTONE) {
            return ObjectCheck.BAD_MARKER;
        }
        int keyLength = Short.toUnsignedInt(segment.get(Words.SHORT_U, offset + KEY_LENGTH_OFFSET));
        int valueLength = segment.get(Words.INT_U, offset + VALUE_LENGTH_OFFSET);
        if (segment.get(ValueLayout.JAVA_BYTE, offset + RESERVED_OFFSET) != 0 || keyLength == 0 || valueLength < 0
                || (type == TYPE_TOMBSTONE && valueLength != 0)) {
            return ObjectCheck.BAD_LENGTH;
        }
        long total = align(HEADER_LENGTH + (long) keyLength + valueLength);
        if (total > readable) {
            return ObjectCheck.TRUNCATED;
        }
        MemorySegment object = segment.asSlice(offset, total);
        if (object.get(Words.INT_U, CRC_OFFSET) != crc(object)) {
            return ObjectCheck.BAD_CRC;
        }
        if (expectedKey != null && (keyLength != expectedKey.byteSize()
                || MemorySegment.mismatch(object, HEADER_LENGTH, HEADER_LENGTH + keyLength, expectedKey, 0, keyLength) != -1)) {
            return ObjectCheck.KEY_MISMATCH;
        }
        return ObjectCheck.VALID;
    }
}
