package io.erda.protocol;

import java.lang.foreign.MemorySegment;

import static io.erda.protocol.MessageHeader.INT;
import static io.erda.protocol.MessageHeader.LONG;
import static io.erda.protocol.MessageHeader.SHORT;

/**
 * Body of {@link MessageType#FLUSH} (persistence method server-flush): the range a client wrote, as head and chain
 * offset so the server checks it against its own log rather than trusting an address.
 *
 * <pre>
 * +-------------------------------+-------------------------------+
 * |            head id            |        reserved (zero)        |
 * +-------------------------------+-------------------------------+
 * |                            length                             |
 * +---------------------------------------------------------------+
 * |                  chain offset (bytes, 64 bits)                |
 * +---------------------------------------------------------------+
 * </pre>
 */
public record FlushRequest(int head, long chainOffset, int length) {
    public static final int HEAD_OFFSET = 0;
    public static final int LENGTH_OFFSET = 4;
    public static final int CHAIN_OFFSET_OFFSET = 8;
    public static final int LENGTH = 16;

    public int encode(MemorySegment s, long offset) {
        s.set(SHORT, offset + HEAD_OFFSET, (short) head);
        s.set(SHORT, offset + HEAD_OFFSET + 2, (short) 0);
        s.set(INT, offset + LENGTH_OFFSET, length);
        s.set(LONG, offset + CHAIN_OFFSET_OFFSET, chainOffset);
        return LENGTH;
    }

    public static FlushRequest decode(MemorySegment s, long offset, int bodyLength) {
        Body.require("FLUSH", LENGTH, bodyLength);
        int length = Body.nonNegative("flush length", s.get(INT, offset + LENGTH_OFFSET), Integer.MAX_VALUE);
        return new FlushRequest(s.get(SHORT, offset + HEAD_OFFSET) & 0xFFFF, s.get(LONG, offset + CHAIN_OFFSET_OFFSET), length);
    }
}
