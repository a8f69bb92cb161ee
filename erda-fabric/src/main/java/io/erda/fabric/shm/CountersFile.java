package io.erda.fabric.shm;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.VarHandle;

/**
 * Layout of an instance's {@code counters} file: the export generation, read by initiators before every
 * one-sided access, and one slot of counters per exported region, incremented by the initiators (in any process)
 * that access it, so the target can report bytes written into its regions by others.
 *
 * <pre>
 *  0                   1                   2                   3
 *  0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1
 * +---------------------------------------------------------------+
 * |                   magic "ERDASHMC" (64 bits)                  |
 * +-------------------------------+-------------------------------+
 * |            version            |             slots             |
 * +-------------------------------+-------------------------------+
 * |              export generation (64 bits, release/acquire)     |
 * +---------------------------------------------------------------+
 * |                    reserved up to byte 64                     |
 * +===============================================================+
 * | slot i at 64 + 32 i:  bytes written (64) | bytes read (64)    |
 * |                       cache lines delayed (64) | reserved (64)|
 * +---------------------------------------------------------------+
 * </pre>
 * Native byte order (both sides are on the same host).
 */
final class CountersFile {
    static final long MAGIC = 0x4552_4441_5348_4d43L; // "ERDASHMC"
    static final int VERSION = 1;
    static final int MAGIC_OFFSET = 0;
    static final int VERSION_OFFSET = 8;
    static final int SLOTS_OFFSET = 12;
    static final int GENERATION_OFFSET = 16;
    static final int HEADER_LENGTH = 64;
    static final int SLOT_LENGTH = 32;
    static final int BYTES_WRITTEN_OFFSET = 0;
    static final int BYTES_READ_OFFSET = 8;
    static final int LINES_DELAYED_OFFSET = 16;
    static final int DEFAULT_SLOTS = 4096;

    private static final VarHandle LONG = ValueLayout.JAVA_LONG.varHandle();

    private CountersFile() {
    }

    static long fileLength(int slots) {
        return HEADER_LENGTH + (long) slots * SLOT_LENGTH;
    }

    static void format(MemorySegment file, int slots) {
        file.set(ValueLayout.JAVA_INT, VERSION_OFFSET, VERSION);
        file.set(ValueLayout.JAVA_INT, SLOTS_OFFSET, slots);
        LONG.setRelease(file, (long) GENERATION_OFFSET, 0L);
        LONG.setRelease(file, (long) MAGIC_OFFSET, MAGIC);
    }

    /** Checks a mapped counters file; the error says what was found. */
    static void verify(MemorySegment file, String path) {
        long magic = (long) LONG.getAcquire(file, (long) MAGIC_OFFSET);
        int version = file.get(ValueLayout.JAVA_INT, VERSION_OFFSET);
        if (magic != MAGIC || version != VERSION) {
            throw new IllegalStateException(path + ": magic 0x" + Long.toHexString(magic) + " version " + version
                    + ", expected 0x" + Long.toHexString(MAGIC) + " version " + VERSION);
        }
    }

    static long generation(MemorySegment file) {
        return (long) LONG.getAcquire(file, (long) GENERATION_OFFSET);
    }

    /** Publishes a new generation after the exports file of that generation is in place (release). */
    static void publishGeneration(MemorySegment file, long generation) {
        LONG.setRelease(file, (long) GENERATION_OFFSET, generation);
    }

    static long slotOffset(int slot, int field) {
        return HEADER_LENGTH + (long) slot * SLOT_LENGTH + field;
    }

    static void add(MemorySegment file, int slot, int field, long delta) {
        long unused = (long) LONG.getAndAdd(file, slotOffset(slot, field), delta);
    }

    /** Zeroes a slot's counters for a new region (release: before the exports naming it are published). */
    static void clear(MemorySegment file, int slot) {
        for (int field = 0; field < SLOT_LENGTH; field += Long.BYTES) {
            LONG.setRelease(file, slotOffset(slot, field), 0L);
        }
    }

    static long get(MemorySegment file, int slot, int field) {
        return (long) LONG.getAcquire(file, slotOffset(slot, field));
    }
}
