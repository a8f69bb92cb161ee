package io.erda.protocol;

import java.lang.foreign.MemorySegment;

/**
 * Body of {@link MessageType#HERD_PUT} (RDMP-KV's RDMA-HERD, and RDMP-SA below its threshold): a {@link PutRequest}
 * with the value right after the key, so the whole pair travels in one message.
 *
 * <pre>
 * +---------------------------------------------------------------+
 * |        PutRequest: flags, key length, value length, 0         |
 * +---------------------------------------------------------------+
 * |                       key bytes ...                           |
 * +---------------------------------------------------------------+
 * |                      value bytes ...                          |
 * +---------------------------------------------------------------+
 * </pre>
 *
 * @param put   the request's key, value length and delete flag
 * @param value the value (a slice of the received message), empty for a DELETE
 */
public record HerdPut(PutRequest put, MemorySegment value) {

    /** Bytes of a body with a {@code keyLength}-byte key and a {@code valueLength}-byte value. */
    public static long encodedLength(long keyLength, long valueLength) {
        return PutRequest.KEY_OFFSET + keyLength + valueLength;
    }

    /** Encodes at {@code offset} ({@code value} null for a DELETE); returns the body length. */
    public static int encode(MemorySegment s, long offset, MemorySegment key, MemorySegment value) {
        boolean delete = value == null;
        int valueLength = delete ? 0 : (int) value.byteSize();
        int at = new PutRequest(delete, valueLength, key).encode(s, offset);
        if (!delete) {
            MemorySegment.copy(value, 0, s, offset + at, valueLength);
        }
        return at + valueLength;
    }

    /** Decodes a received body; key and value are slices of {@code s}. */
    public static HerdPut decode(MemorySegment s, long offset, int bodyLength, int maxKeyLength, int maxValueLength) {
        PutRequest put = PutRequest.decode(s, offset, bodyLength, maxKeyLength, maxValueLength);
        long at = PutRequest.KEY_OFFSET + put.key().byteSize();
        Body.require("HERD_PUT value", at + put.valueLength(), bodyLength);
        return new HerdPut(put, Body.slice(s, offset + at, put.valueLength()));
    }
}
