package io.erda.protocol;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;

/**
 * Body of {@link MessageType#RAW_RESERVE_REPLY} (Read After Write baseline, paper §5.1): the ring slot the client
 * WRITEs its object into (then READs to force it). The request body is a {@link PutRequest}.
 *
 * <pre>
 * +---------------------------------------------------------------+  0
 * |                    ring position (u64)                        |
 * +---------------------------------------------------------------+  8
 * |                  slot address (u64, remote)                   |
 * +---------------------------------------------------------------+ 16
 * |                             rkey                              |
 * +---------------------------------------------------------------+ 20
 * |                 object length (padded, bytes)                 |
 * +---------------------------------------------------------------+ 24
 * |                 lease (ns, u64, from reservation)             |
 * +---------------------------------------------------------------+ 32
 * </pre>
 */
public record RawReserveReply(long position, long address, int rkey, int objectLength, long leaseNanos) {
    public static final int POSITION_OFFSET = 0;
    public static final int ADDRESS_OFFSET = 8;
    public static final int RKEY_OFFSET = 16;
    public static final int OBJECT_LENGTH_OFFSET = 20;
    public static final int LEASE_OFFSET = 24;
    public static final int LENGTH = 32;

    private static final ValueLayout.OfInt INT = MessageHeader.INT;
    private static final ValueLayout.OfLong LONG = MessageHeader.LONG;

    public int encode(MemorySegment s, long offset) {
        s.set(LONG, offset + POSITION_OFFSET, position);
        s.set(LONG, offset + ADDRESS_OFFSET, address);
        s.set(INT, offset + RKEY_OFFSET, rkey);
        s.set(INT, offset + OBJECT_LENGTH_OFFSET, objectLength);
        s.set(LONG, offset + LEASE_OFFSET, leaseNanos);
        return LENGTH;
    }

    public static RawReserveReply decode(MemorySegment s, long offset, int bodyLength) {
        Body.require("RAW_RESERVE_REPLY", LENGTH, bodyLength);
        return new RawReserveReply(s.get(LONG, offset + POSITION_OFFSET), s.get(LONG, offset + ADDRESS_OFFSET),
                s.get(INT, offset + RKEY_OFFSET), s.get(INT, offset + OBJECT_LENGTH_OFFSET),
                s.get(LONG, offset + LEASE_OFFSET));
    }
}
