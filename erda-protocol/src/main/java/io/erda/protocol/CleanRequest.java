package io.erda.protocol;

import java.lang.foreign.MemorySegment;

import static io.erda.protocol.MessageHeader.INT;

/**
 * Body of {@link MessageType#CLEAN}: the head to clean now.
 *
 * <pre>
 * +---------------------------------------------------------------+
 * |                          head id                              |
 * +---------------------------------------------------------------+
 * </pre>
 */
public record CleanRequest(int head) {
    public static final int HEAD_OFFSET = 0;
    public static final int LENGTH = 4;

    public int encode(MemorySegment s, long offset) {
        s.set(INT, offset + HEAD_OFFSET, head);
        return LENGTH;
    }

    public static CleanRequest decode(MemorySegment s, long offset, int bodyLength) {
        Body.require("CLEAN", LENGTH, bodyLength);
        return new CleanRequest(s.get(INT, offset + HEAD_OFFSET));
    }
}
