package io.erda.protocol;

import java.lang.foreign.MemorySegment;

/**
 * Body of {@link MessageType#RDMP_COMMIT} (RDMP-KV's RDMP-SA): the object the client has written, as its
 * {@link MessageType#RDMP_ALLOC_REPLY} named it; the server flushes it and sets its persist and valid flags.
 *
 * <pre>
 * +---------------------------------------------------------------+  0
 * |                     sequence number (u64)                     |
 * +---------------------------------------------------------------+  8
 * |                  object address (u64, remote)                 |
 * +---------------------------------------------------------------+ 16
 * </pre>
 */
public record RdmpCommitRequest(long sequence, long address) {
    public static final int SEQUENCE_OFFSET = 0;
    public static final int ADDRESS_OFFSET = 8;
    public static final int LENGTH = 16;

    public int encode(MemorySegment s, long offset) {
        s.set(MessageHeader.LONG, offset + SEQUENCE_OFFSET, sequence);
        s.set(MessageHeader.LONG, offset + ADDRESS_OFFSET, address);
        return LENGTH;
    }

    public static RdmpCommitRequest decode(MemorySegment s, long offset, int bodyLength) {
        Body.require("RDMP_COMMIT", LENGTH, bodyLength);
        return new RdmpCommitRequest(s.get(MessageHeader.LONG, offset + SEQUENCE_OFFSET),
                s.get(MessageHeader.LONG, offset + ADDRESS_OFFSET));
    }
}
