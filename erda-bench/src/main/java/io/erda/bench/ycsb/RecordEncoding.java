package io.erda.bench.ycsb;

import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;
import java.util.Map;
import java.util.Set;
import site.ycsb.ByteArrayByteIterator;
import site.ycsb.ByteIterator;

/**
 * How a YCSB record (a map of field name to field bytes) becomes the one value stored under its key.
 *
 * <pre>
 * +-----------+---------------------------------------------------------------+
 * | count (v) | count x ( name length (v) | name (UTF-8) | value length (v) | value ) |
 * +-----------+---------------------------------------------------------------+
 * (v) = unsigned LEB128 varint: 1 byte below 128, 2 bytes below 16384, ...
 * </pre>
 *
 * Fields are written in the map's iteration order. With our workloads (fieldcount=1, field name {@code field0},
 * fieldlength = the value size) a stored value is the value size plus 9 bytes below 128 B and 10 bytes from
 * 128 B to 16 KiB (count 1, name length 1, "field0" 6, value length 1 or 2): 25 B for 16 B, 1034 B for 1 KiB.
 */
public final class RecordEncoding {

    private RecordEncoding() {
    }

    public static byte[] encode(Map<String, ByteIterator> fields) {
        ByteArrayOutputStream out = new ByteArrayOutputStream(64);
        writeVarint(out, fields.size());
        for (Map.Entry<String, ByteIterator> f : fields.entrySet()) {
            byte[] name = f.getKey().getBytes(StandardCharsets.UTF_8);
            byte[] value = f.getValue().toArray();
            writeVarint(out, name.length);
            out.writeBytes(name);
            writeVarint(out, value.length);
            out.writeBytes(value);
        }
        return out.toByteArray();
    }

    /**
     * Decodes {@code stored} into {@code result}: every field if {@code wanted} is null (YCSB's "all fields"),
     * else only those named. Throws {@link IllegalArgumentException} naming the offset if the bytes are not a
     * record of this encoding.
     */
    public static void decode(byte[] stored, Set<String> wanted, Map<String, ByteIterator> result) {
        Cursor c = new Cursor(stored);
        long count = c.varint();
        for (long i = 0; i < count; i++) {
            String name = new String(c.bytes(c.length()), StandardCharsets.UTF_8);
            byte[] value = c.bytes(c.length());
            if (wanted == null || wanted.contains(name)) {
                result.put(name, new ByteArrayByteIterator(value));
            }
        }
        if (c.pos != stored.length) {
            throw new IllegalArgumentException("record of " + stored.length + " bytes has " + (stored.length - c.pos)
                + " bytes after its " + count + " fields");
        }
    }

    static void writeVarint(ByteArrayOutputStream out, long v) {
        while ((v & ~0x7FL) != 0) {
            out.write((int) (v & 0x7F) | 0x80);
            v >>>= 7;
        }
        out.write((int) v);
    }

    private static final class Cursor {
        final byte[] b;
        int pos;

        Cursor(byte[] b) {
            this.b = b;
        }

        long varint() {
            long v = 0;
            for (int shift = 0; shift < 35; shift += 7) {
                if (pos >= b.length) {
                    throw new IllegalArgumentException("record of " + b.length + " bytes ends inside a length at offset " + pos);
                }
                int x = b[pos++];
                v |= (long) (x & 0x7F) << shift;
                if ((x & 0x80) == 0) {
                    return v;
                }
            }
            throw new IllegalArgumentException("length at offset " + pos + " of a " + b.length + "-byte record is longer than 5 bytes");
        }

        int length() {
            long n = varint();
            if (n > b.length - pos) {
                throw new IllegalArgumentException("length " + n + " at offset " + pos + " runs past the end of a "
                    + b.length + "-byte record");
            }
            return (int) n;
        }

        byte[] bytes(int n) {
            byte[] r = java.util.Arrays.copyOfRange(b, pos, pos + n);
            pos += n;
            return r;
        }
    }
}
