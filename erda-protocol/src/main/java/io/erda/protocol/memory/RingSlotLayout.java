package io.erda.protocol.memory;

import java.lang.foreign.MemorySegment;
import java.util.zip.CRC32C;

/**
 * A slot of the Read After Write baseline's PM ring, as the client WRITEs it in one piece:
 * <pre>
 * 0  ring position the slot was reserved for (u64)
 * 8  CRC32C over bytes 0..8 and the object (u32)
 * 12 reserved 0 (u32)
 * 16 the object ({@link ObjectLayout})
 * </pre>
 * The position ties the bytes to one reservation: a writer that outlived its lease and WRITEs after its slot was
 * recycled (and perhaps handed out again) leaves an object the server recognises as not the slot's, even after a
 * crash, and the CRC over position and object together refuses a slot mixed from two writers' WRITEs.
 */
public final class RingSlotLayout {
    public static final int POSITION_OFFSET = 0;
    public static final int CRC_OFFSET = 8;
    public static final int HEADER_LENGTH = 16;

    private RingSlotLayout() {
    }

    /** Writes the position and CRC in front of the object already encoded at {@code offset + HEADER_LENGTH}. */
    public static void seal(MemorySegment target, long offset, long position, long objectLength) {
        target.set(Words.LONG, offset + POSITION_OFFSET, position);
        target.set(Words.INT_U, offset + CRC_OFFSET + 4, 0);
        target.set(Words.INT_U, offset + CRC_OFFSET, crc(target, offset, objectLength));
    }

    /**
     * Whether the slot at {@code offset} holds a complete object written for {@code position}: the position word
     * matches, the object validates within {@code available - HEADER_LENGTH} bytes (with {@code expectedKey} if not
     * null), and the slot's CRC covers both. On true, {@code object} is wrapped on the slot's object.
     */
    public static boolean holds(MemorySegment slot, long offset, long available, long position, MemorySegment expectedKey,
                                ObjectFlyweight object) {
        if (slot.get(Words.LONG, offset + POSITION_OFFSET) != position) {
            return false;
        }
        object.wrap(slot, offset + HEADER_LENGTH);
        if (!object.validate(available - HEADER_LENGTH, expectedKey).isValid()) {
            return false;
        }
        return slot.get(Words.INT_U, offset + CRC_OFFSET) == crc(slot, offset, object.totalLength());
    }

    /** The position word of the slot at {@code offset}, whatever it holds. */
    public static long position(MemorySegment slot, long offset) {
        return slot.get(Words.LONG, offset + POSITION_OFFSET);
    }

    private static int crc(MemorySegment slot, long offset, long objectLength) {
        CRC32C crc = new CRC32C();
        crc.update(slot.asSlice(offset + POSITION_OFFSET, Long.BYTES).asByteBuffer());
        crc.update(slot.asSlice(offset + HEADER_LENGTH, objectLength).asByteBuffer());
        return (int) crc.getValue();
    }
}
