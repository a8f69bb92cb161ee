package io.erda.fabric.shm;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.VarHandle;

/**
 * Layout of a connection's ring file: two single-producer single-consumer rings, one per direction, mapped by
 * both processes. The acceptor creates the file, the connector maps it during the handshake, then the acceptor
 * unlinks it (so a crashed pair leaves nothing behind).
 *
 * <pre>
 *  0                   1                   2                   3
 *  0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1
 * +---------------------------------------------------------------+
 * |                   magic "ERDARING" (64 bits)                  |
 * +-------------------------------+-------------------------------+
 * |            version            |      capacity (per ring)      |
 * +-------------------------------+-------------------------------+
 * |                     reserved up to byte 64                    |
 * +===============================================================+
 * | ring 0 (acceptor to connector): a 128-byte ring header, then  |
 * |   capacity bytes of records (RingRecord)                      |
 * +---------------------------------------------------------------+
 * | ring 1 (connector to acceptor): the same                      |
 * +---------------------------------------------------------------+
 *
 * ring header (two cache lines, so the producer's doorbell check does not share a line with the position the
 * consumer updates per record):
 * +---------------------------------------------------------------+
 * |   consumer position (64 bits, release by the consumer,        |
 * |   acquire by the producer); reserved up to byte 64            |
 * +-------------------------------+-------------------------------+
 * |        consumer asleep        |       producer waiting        |
 * +-------------------------------+-------------------------------+
 * |                     reserved up to byte 128                   |
 * +---------------------------------------------------------------+
 * </pre>
 * The two words are doorbell requests, one per way a side can wait on the other. <em>Consumer asleep</em>: the
 * consumer's poller sets it before it blocks, then looks at the ring once more; a producer that then publishes
 * reads it. <em>Producer waiting</em>: a producer that found no space sets it, then tries once more; the
 * consumer reads it after freeing space. Whoever finds a word set clears it (compare-and-set) and writes one
 * byte to the connection's socket, which wakes the other side's poller out of its selector in whatever process
 * it runs. Both are the classic lost-wakeup protocol with a full fence on either side (see {@link Ring}).
 */
final class RingFile {
    static final long MAGIC = 0x4552_4441_5249_4e47L; // "ERDARING"
    static final int VERSION = 2; // 2: consumer-asleep word and socket doorbells
    static final int VERSION_OFFSET = 8;
    static final int CAPACITY_OFFSET = 12;
    static final int HEADER_LENGTH = 64;
    static final int MIN_CAPACITY = 4096;
    static final int RING_HEADER_LENGTH = 128;
    static final int CONSUMER_POSITION_OFFSET = 0;
    static final int CONSUMER_ASLEEP_OFFSET = 64;
    static final int PRODUCER_WAITING_OFFSET = 68;
    static final int TO_CONNECTOR = 0;
    static final int TO_ACCEPTOR = 1;

    private static final VarHandle LONG = ValueLayout.JAVA_LONG.varHandle();

    private RingFile() {
    }

    static long fileLength(int capacity) {
        return HEADER_LENGTH + 2L * (RING_HEADER_LENGTH + capacity);
    }

    static long ringOffset(int ring, int capacity) {
        return HEADER_LENGTH + (long) ring * (RING_HEADER_LENGTH + capacity);
    }

    static void format(MemorySegment file, int capacity) {
        if (Integer.bitCount(capacity) != 1 || capacity < MIN_CAPACITY) {
            throw new IllegalArgumentException("ring capacity " + capacity + " must be a power of two >= " + MIN_CAPACITY);
        }
        file.set(ValueLayout.JAVA_INT, VERSION_OFFSET, VERSION);
        file.set(ValueLayout.JAVA_INT, CAPACITY_OFFSET, capacity);
        LONG.setRelease(file, 0L, MAGIC);
    }

    /**
     * Checks the file (magic, version, a capacity {@link #format} allows whose rings fit the file) and returns its
     * ring capacity; a bad file throws {@link RingViolation} naming the value and the limit.
     */
    static int verify(MemorySegment file, String path) {
        if (file.byteSize() < HEADER_LENGTH) {
            throw new RingViolation(path + ": " + file.byteSize() + " bytes, shorter than the " + HEADER_LENGTH + "-byte header");
        }
        long magic = (long) LONG.getAcquire(file, 0L);
        int version = file.get(ValueLayout.JAVA_INT, VERSION_OFFSET);
        if (magic != MAGIC || version != VERSION) {
            throw new RingViolation(path + ": magic 0x" + Long.toHexString(magic) + " version " + version
                    + ", expected 0x" + Long.toHexString(MAGIC) + " version " + VERSION);
        }
        int capacity = file.get(ValueLayout.JAVA_INT, CAPACITY_OFFSET);
        if (Integer.bitCount(capacity) != 1 || capacity < MIN_CAPACITY || fileLength(capacity) > file.byteSize()) {
            throw new RingViolation(path + ": ring capacity " + capacity + " is not a power of two from " + MIN_CAPACITY
                    + " whose two rings fit the file's " + file.byteSize() + " bytes");
        }
        return capacity;
    }

    /** The ring {@code ring} of a mapped file. */
    static Ring ring(MemorySegment file, int ring, int capacity) {
        long at = ringOffset(ring, capacity);
        return new Ring(file.asSlice(at, RING_HEADER_LENGTH), file.asSlice(at + RING_HEADER_LENGTH, capacity));
    }
}
