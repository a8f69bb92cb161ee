package io.erda.protocol;

import java.lang.foreign.MemorySegment;

import static io.erda.protocol.MessageHeader.INT;
import static io.erda.protocol.MessageHeader.LONG;
import static io.erda.protocol.MessageHeader.SHORT;

/**
 * Body of {@link MessageType#BLOCK} ({@link PutMode#ONE_SIDED}): a leased block of a head's log for one-sided updates.
 * The server grants at least {@code minLength} bytes (its block size, or more for a larger object), in one segment.
 * A client that replaces a block of the head names it in {@code returned} (its chain offset; {@link #NONE} for none):
 * the server ends that block's lease first, so a cleaning of the head does not wait for it.
 *
 * <pre>
 * +-------------------------------+-------------------------------+
 * |            head id            |        reserved (zero)        |
 * +-------------------------------+-------------------------------+
 * |                  least length (bytes, padded)                 |
 * +---------------------------------------------------------------+
 * |          chain offset of the block given back, or -1          |
 * +---------------------------------------------------------------+
 * </pre>
 */
public record BlockRequest(int head, int minLength, long returned) {
    public static final long NONE = -1;
    public static final int HEAD_OFFSET = 0;
    public static final int MIN_LENGTH_OFFSET = 4;
    public static final int RETURNED_OFFSET = 8;
    public static final int LENGTH = 16;

    public int encode(MemorySegment s, long offset) {
        s.set(SHORT, offset + HEAD_OFFSET, (short) head);
        s.set(SHORT, offset + HEAD_OFFSET + 2, (short) 0);
        s.set(INT, offset + MIN_LENGTH_OFFSET, minLength);
        s.set(LONG, offset + RETURNED_OFFSET, returned);
        return LENGTH;
    }

    public static BlockRequest decode(MemorySegment s, long offset, int bodyLength) {
        Body.require("BLOCK", LENGTH, bodyLength);
        int minLength = Body.nonNegative("block length", s.get(INT, offset + MIN_LENGTH_OFFSET), Integer.MAX_VALUE);
        return new BlockRequest(s.get(SHORT, offset + HEAD_OFFSET) & 0xFFFF, minLength,
                s.get(LONG, offset + RETURNED_OFFSET));
    }
}
