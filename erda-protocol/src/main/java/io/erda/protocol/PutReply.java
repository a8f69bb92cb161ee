package io.erda.protocol;

import java.lang.foreign.MemorySegment;

import static io.erda.protocol.MessageHeader.INT;
import static io.erda.protocol.MessageHeader.LONG;
import static io.erda.protocol.MessageHeader.SHORT;

/**
 * Body of {@link MessageType#PUT_REPLY}: where to write the object, and for how long the reservation is leased.
 *
 * <pre>
 * +-------------------------------+-------------------------------+
 * |            head id            |        reserved (zero)        |
 * +-------------------------------+-------------------------------+
 * |                 object length (bytes, padded)                 |
 * +---------------------------------------------------------------+
 * |                  chain offset (bytes, 64 bits)                |
 * +---------------------------------------------------------------+
 * |                 remote address (64 bits)                      |
 * +---------------------------------------------------------------+
 * |                             rkey                              |
 * +---------------------------------------------------------------+
 * |                        reserved (zero)                        |
 * +---------------------------------------------------------------+
 * |                  lease (nanoseconds, 64 bits)                 |
 * +---------------------------------------------------------------+
 * </pre>
 */
public record PutReply(int head, int objectLength, long chainOffset, long address, int rkey, long leaseNanos) {
    public static final int HEAD_OFFSET = 0;
    public static final int OBJECT_LENGTH_OFFSET = 4;
    public static final int CHAIN_OFFSET_OFFSET = 8;
    public static final int ADDRESS_OFFSET = 16;
    public static final int RKEY_OFFSET = 24;
    public static final int LEASE_OFFSET = 32;
    public static final int LENGTH = 40;

    public int encode(MemorySegment s, long offset) {
        s.set(SHORT, offset + HEAD_OFFSET, (short) head);
        s.set(SHORT, offset + HEAD_OFFSET + 2, (short) 0);
        s.set(INT, offset + OBJECT_LENGTH_OFFSET, objectLength);
        s.set(LONG, offset + CHAIN_OFFSET_OFFSET, chainOffset);
        s.set(LONG, offset + ADDRESS_OFFSET, address);
        s.set(INT, offset + RKEY_OFFSET, rkey);
        s.set(INT, offset + RKEY_OFFSET + 4, 0);
        s.set(LONG, offset + LEASE_OFFSET, leaseNanos);
        return LENGTH;
    }

    public static PutReply decode(MemorySegment s, long offset, int bodyLength) {
        Body.require("PUT_REPLY", LENGTH, bodyLength);
        return new PutReply(s.get(SHORT, offset + HEAD_OFFSET) & 0xFFFF, s.get(INT, offset + OBJECT_LENGTH_OFFSET),
                s.get(LONG, offset + CHAIN_OFFSET_OFFSET), s.get(LONG, offset + ADDRESS_OFFSET),
                s.get(INT, offset + RKEY_OFFSET), s.get(LONG, offset + LEASE_OFFSET));
    }
}
