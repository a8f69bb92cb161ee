package io.erda.client;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.zip.CRC32C;

/**
 * Values that carry their own key, sequence number and checksum, so a checker can tell a whole value PUT for a key
 * from a torn, mixed or misrouted one without remembering the bytes.
 *
 * <pre>sequence (8) | key length (4) | key | filler | CRC32C of everything before (4)</pre>
 */
final class CheckedValue {
    private static final int FIXED = 8 + 4 + 4;

    private CheckedValue() {
    }

    static byte[] of(byte[] key, long sequence, int size) {
        int length = Math.max(size, FIXED + key.length);
        ByteBuffer b = ByteBuffer.allocate(length).order(ByteOrder.LITTLE_ENDIAN);
        b.putLong(sequence).putInt(key.length).put(key);
        for (int i = b.position(); i < length - 4; i++) {
            b.put((byte) (sequence * 31 + i));
        }
        CRC32C crc = new CRC32C();
        crc.update(b.array(), 0, length - 4);
        b.putInt((int) crc.getValue());
        return b.array();
    }

    /** The sequence number of a whole value of {@code key}; throws naming what is wrong otherwise. */
    static long sequence(byte[] key, byte[] value) {
        if (value.length < FIXED + key.length) {
            throw new AssertionError("value of " + value.length + " bytes is too short for key " + str(key));
        }
        ByteBuffer b = ByteBuffer.wrap(value).order(ByteOrder.LITTLE_ENDIAN);
        CRC32C crc = new CRC32C();
        crc.update(value, 0, value.length - 4);
        if (b.getInt(value.length - 4) != (int) crc.getValue()) {
            throw new AssertionError("value of " + value.length + " bytes for key " + str(key) + " fails its checksum (torn or mixed)");
        }
        int keyLength = b.getInt(8);
        if (keyLength != key.length || !Arrays.equals(value, 12, 12 + keyLength, key, 0, key.length)) {
            throw new AssertionError("value for key " + str(key) + " carries another key");
        }
        return b.getLong(0);
    }

    static String str(byte[] key) {
        return new String(key, StandardCharsets.UTF_8);
    }
}
