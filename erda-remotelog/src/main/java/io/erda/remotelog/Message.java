package io.erda.remotelog;

import java.lang.foreign.MemorySegment;
import java.util.zip.CRC32C;

/**
 * A REMOTELOG message (the payload of a SEND), as it lies in a receive buffer:
 * <pre>
 *   0       4       8               16      20      24
 *   +-------+-------+---------------+-------+-------+---------------------------------+
 *   | kind  | flags | offset / pos  | length| CRC32C| record (APPLY), tail (TAIL flag) |
 *   +-------+-------+---------------+-------+-------+---------------------------------+
 * </pre>
 * FLUSH_RANGE asks the responder to write back {@code [offset, offset+length)} of the log and acknowledge (the
 * Intel seed's GPSPM); APPLY carries the record for {@code position} (and, with TAIL, the new tail pointer) for the
 * responder to copy into the log; SYNC only asks for an acknowledgement. The CRC32C covers the header before it and
 * the payload, so recovery applies only whole messages from PM receive buffers.
 *
 * <p>Immediate data of a WRITE_WITH_IMM: bits 31-30 the kind ({@link #IMM_NOTIFY}, {@link #IMM_FLUSH_RECORD},
 * {@link #IMM_FLUSH_TAIL}), bits 29-0 the record's position.
 */
public final class Message {
    public static final int KIND_OFFSET = 0;
    public static final int FLAGS_OFFSET = 4;
    public static final int WHERE_OFFSET = 8;
    public static final int LENGTH_OFFSET = 16;
    public static final int CRC_OFFSET = 20;
    public static final int HEADER_LENGTH = 24;

    public static final int FLUSH_RANGE = 1;
    public static final int APPLY = 2;
    public static final int SYNC = 3;

    /** APPLY: write back the copies before going on. */
    public static final int FLAG_FLUSH = 1;
    /** APPLY: acknowledge once done. */
    public static final int FLAG_ACK = 2;
    /** APPLY: the payload also carries the new tail pointer, stored after the record. */
    public static final int FLAG_TAIL = 4;

    public static final int IMM_NOTIFY = 0;
    public static final int IMM_FLUSH_RECORD = 1;
    public static final int IMM_FLUSH_TAIL = 2;
    private static final int IMM_POSITION_MASK = (1 << 30) - 1;

    private Message() {
    }

    /** The longest message for records of {@code recordSize} bytes, rounded up to whole cache lines. */
    public static int slotSize(int recordSize) {
        return (HEADER_LENGTH + recordSize + LogLayout.TAIL_LENGTH + 63) & ~63;
    }

    /** Writes a message at {@code at}; returns its length. {@code record} is null unless APPLY. */
    public static int encode(MemorySegment buffer, long at, int kind, int flags, long where, int length,
                             MemorySegment record, long tail) {
        buffer.set(LogLayout.intLayout(), at + KIND_OFFSET, kind);
        buffer.set(LogLayout.intLayout(), at + FLAGS_OFFSET, flags);
        buffer.set(LogLayout.longLayout(), at + WHERE_OFFSET, where);
        buffer.set(LogLayout.intLayout(), at + LENGTH_OFFSET, length);
        int payload = 0;
        if (record != null) {
            MemorySegment.copy(record, 0, buffer, at + HEADER_LENGTH, length);
            payload = length;
            if ((flags & FLAG_TAIL) != 0) {
                buffer.set(LogLayout.longLayout(), at + HEADER_LENGTH + length, tail);
                payload += LogLayout.TAIL_LENGTH;
            }
        }
        buffer.set(LogLayout.intLayout(), at + CRC_OFFSET, checksum(buffer, at, payload));
        return HEADER_LENGTH + payload;
    }

    /** True when the message at {@code at} is whole: its CRC matches and its fields are in range. */
    public static boolean intact(MemorySegment buffer, long at, int slotSize) {
        int kind = kind(buffer, at);
        if (kind < FLUSH_RANGE || kind > SYNC) {
            return false;
        }
        int payload = payloadLength(buffer, at);
        if (payload < 0 || HEADER_LENGTH + payload > slotSize) {
            return false;
        }
        return buffer.get(LogLayout.intLayout(), at + CRC_OFFSET) == checksum(buffer, at, payload);
    }

    public static int kind(MemorySegment buffer, long at) {
        return buffer.get(LogLayout.intLayout(), at + KIND_OFFSET);
    }

    public static int flags(MemorySegment buffer, long at) {
        return buffer.get(LogLayout.intLayout(), at + FLAGS_OFFSET);
    }

    public static long where(MemorySegment buffer, long at) {
        return buffer.get(LogLayout.longLayout(), at + WHERE_OFFSET);
    }

    public static int length(MemorySegment buffer, long at) {
        return buffer.get(LogLayout.intLayout(), at + LENGTH_OFFSET);
    }

    /** APPLY with TAIL: the tail pointer after the record. */
    public static long tail(MemorySegment buffer, long at) {
        return buffer.get(LogLayout.longLayout(), at + HEADER_LENGTH + length(buffer, at));
    }

    public static int imm(int kind, long position) {
        if (position < 0 || position > IMM_POSITION_MASK) {
            throw new IllegalArgumentException("position " + position + " does not fit the 30 bits of immediate data");
        }
        return (kind << 30) | (int) position;
    }

    public static int immKind(int imm) {
        return imm >>> 30;
    }

    public static long immPosition(int imm) {
        return imm & IMM_POSITION_MASK;
    }

    private static int payloadLength(MemorySegment buffer, long at) {
        if (kind(buffer, at) != APPLY) {
            return 0;
        }
        int length = length(buffer, at);
        return length < 0 ? -1 : length + ((flags(buffer, at) & FLAG_TAIL) != 0 ? LogLayout.TAIL_LENGTH : 0);
    }

    private static int checksum(MemorySegment buffer, long at, int payload) {
        CRC32C crc = new CRC32C();
        crc.update(buffer.asSlice(at, CRC_OFFSET).asByteBuffer());
        crc.update(buffer.asSlice(at + HEADER_LENGTH, payload).asByteBuffer());
        return (int) crc.getValue();
    }
}
