package io.erda.protocol;

import java.lang.foreign.MemorySegment;

import static io.erda.protocol.MessageHeader.INT;

/**
 * Body of {@link MessageType#GET_REPLY}. "Not found" is status {@link WireStatus#NOT_FOUND} with no body.
 *
 * <pre>
 * +---------------------------------------------------------------+
 * |                         value length                          |
 * +---------------------------------------------------------------+
 * |                        reserved (zero)                        |
 * +---------------------------------------------------------------+
 * |                      value bytes ...                          |
 * </pre>
 */
public record GetReply(MemorySegment value) {
    public static final int VALUE_LENGTH_OFFSET = 0;
    public static final int VALUE_OFFSET = 8;

    public int encode(MemorySegment s, long offset) {
        s.set(INT, offset + VALUE_LENGTH_OFFSET, (int) value.byteSize());
        s.set(INT, offset + 4, 0);
        MemorySegment.copy(value, 0, s, offset + VALUE_OFFSET, value.byteSize());
        return VALUE_OFFSET + (int) value.byteSize();
    }

    public static GetReply decode(MemorySegment s, long offset, int bodyLength) {
        Body.require("GET_REPLY", VALUE_OFFSET, bodyLength);
        int valueLength = Body.nonNegative("value length", s.get(INT, offset + VALUE_LENGTH_OFFSET), bodyLength - VALUE_OFFSET);
        return new GetReply(Body.slice(s, offset + VALUE_OFFSET, valueLength));
    }
}
