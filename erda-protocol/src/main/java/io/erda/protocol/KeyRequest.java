package io.erda.protocol;

import java.lang.foreign.MemorySegment;

import static io.erda.protocol.MessageHeader.INT;

/**
 * Body of requests that name just a key ({@link MessageType#GET}).
 *
 * <pre>
 * +---------------------------------------------------------------+
 * |                          key length                           |
 * +---------------------------------------------------------------+
 * |                        reserved (zero)                        |
 * +---------------------------------------------------------------+
 * |                       key bytes ...                           |
 * </pre>
 */
public record KeyRequest(MemorySegment key) {
    public static final int KEY_LENGTH_OFFSET = 0;
    public static final int KEY_OFFSET = 8;

    public int encode(MemorySegment s, long offset) {
        s.set(INT, offset + KEY_LENGTH_OFFSET, (int) key.byteSize());
        s.set(INT, offset + 4, 0);
        MemorySegment.copy(key, 0, s, offset + KEY_OFFSET, key.byteSize());
        return KEY_OFFSET + (int) key.byteSize();
    }

    public static KeyRequest decode(MemorySegment s, long offset, int bodyLength, int maxKeyLength) {
        Body.require("key request", KEY_OFFSET, bodyLength);
        int keyLength = Body.nonNegative("key length", s.get(INT, offset + KEY_LENGTH_OFFSET), maxKeyLength);
        Body.require("key", (long) KEY_OFFSET + keyLength, bodyLength);
        return new KeyRequest(Body.slice(s, offset + KEY_OFFSET, keyLength));
    }
}
