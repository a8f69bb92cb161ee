package io.erda.remotelog;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteOrder;
import java.util.zip.CRC32C;

/**
 * The remote log's layout: a 64-byte header whose first word is the tail pointer (compound appends: the number of
 * records), then fixed-size checksummed records, record {@code p} at {@code HEADER_LENGTH + p * recordSize}:
 * <pre>
 *   0               8               16                           size-4     size
 *   +---------------+---------------+----------------------------+----------+
 *   | sequence      | position      | filler (from the sequence) | CRC32C   |
 *   +---------------+---------------+----------------------------+----------+
 * </pre>
 * The sequence is unique per append (across power failures), the position is where it belongs, and the CRC32C covers
 * everything before it: a record is intact when its CRC matches and its position is where it lies (§4.1: the tail is
 * where the checksum first fails). Little-endian throughout.
 */
public final class LogLayout {
    public static final int TAIL_OFFSET = 0;
    public static final int TAIL_LENGTH = 8;
    public static final int HEADER_LENGTH = 64;
    public static final int SEQUENCE_OFFSET = 0;
    public static final int POSITION_OFFSET = 8;
    public static final int CRC_LENGTH = 4;
    public static final int MIN_RECORD_SIZE = 24;
    private static final ValueLayout.OfLong LONG = ValueLayout.JAVA_LONG_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);
    private static final ValueLayout.OfInt INT = ValueLayout.JAVA_INT_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);

    private final int recordSize;
    private final int capacity;

    /** A log of {@code capacity} records of {@code recordSize} bytes (a multiple of 8, at least 24). */
    public LogLayout(int recordSize, int capacity) {
        if (recordSize < MIN_RECORD_SIZE || recordSize % 8 != 0) {
            throw new IllegalArgumentException("record size " + recordSize + " must be a multiple of 8 and at least "
                    + MIN_RECORD_SIZE);
        }
        if (capacity <= 0) {
            throw new IllegalArgumentException("capacity " + capacity + " records must be positive");
        }
        this.recordSize = recordSize;
        this.capacity = capacity;
    }

    public int recordSize() {
        return recordSize;
    }

    public int capacity() {
        return capacity;
    }

    /** Bytes of the whole log: header and records. */
    public long byteSize() {
        return HEADER_LENGTH + (long) recordSize * capacity;
    }

    /** Where record {@code position} starts. */
    public long recordOffset(long position) {
        if (position < 0 || position >= capacity) {
            throw new IllegalArgumentException("position " + position + " is outside the log's " + capacity + " records");
        }
        return HEADER_LENGTH + position * recordSize;
    }

    /** Fills {@code record} (at least {@link #recordSize} bytes from {@code offset}) with the append's record. */
    public void encode(MemorySegment record, long offset, long sequence, long position) {
        record.set(LONG, offset + SEQUENCE_OFFSET, sequence);
        record.set(LONG, offset + POSITION_OFFSET, position);
        for (int i = 16; i < recordSize - CRC_LENGTH; i++) {
            record.set(ValueLayout.JAVA_BYTE, offset + i, (byte) (sequence * 31 + i));
        }
        record.set(INT, offset + recordSize - CRC_LENGTH, crc(record, offset, recordSize - CRC_LENGTH));
    }

    /** The sequence of the intact record at {@code position} of {@code log}, or -1 if it is missing or torn. */
    public long intactSequence(MemorySegment log, long position) {
        long at = recordOffset(position);
        if (log.get(INT, at + recordSize - CRC_LENGTH) != crc(log, at, recordSize - CRC_LENGTH)
                || log.get(LONG, at + POSITION_OFFSET) != position) {
            return -1;
        }
        long sequence = log.get(LONG, at + SEQUENCE_OFFSET);
        return sequence > 0 ? sequence : -1;
    }

    public long tail(MemorySegment log) {
        return log.get(LONG, TAIL_OFFSET);
    }

    public void setTail(MemorySegment log, long tail) {
        log.set(LONG, TAIL_OFFSET, tail);
    }

    /** CRC32C of {@code [offset, offset+length)}. */
    public static int crc(MemorySegment segment, long offset, int length) {
        CRC32C crc = new CRC32C();
        crc.update(segment.asSlice(offset, length).asByteBuffer());
        return (int) crc.getValue();
    }

    static ValueLayout.OfLong longLayout() {
        return LONG;
    }

    static ValueLayout.OfInt intLayout() {
        return INT;
    }
}
