package io.erda.core.pm;

import io.erda.protocol.memory.Words;
import java.lang.foreign.MemorySegment;
import java.util.zip.CRC32C;

/**
 * Layout of the self-describing header at the start of every PM file (BookKeeper style: a magic
 * fingerprint and a version checked on open).
 *
 * <pre>
 *  0                   1                   2                   3
 *  0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1
 * +---------------------------------------------------------------+  0
 * |                      Magic "ERDAPM\0\1" (8 bytes)             |
 * +---------------------------------------------------------------+  8
 * |                        Format Version                         |
 * +---------------------------------------------------------------+ 12
 * |                          File Kind                            |
 * +---------------------------------------------------------------+ 16
 * |                  Header Length (8 bytes, 4096)                |
 * +---------------------------------------------------------------+ 24
 * |                  Data Length (8 bytes)                        |
 * +---------------------------------------------------------------+ 32
 * |          Geometry slots 0..5 (6 x 8 bytes, per kind)          |
 * +---------------------------------------------------------------+ 80
 * |                 Header CRC32C over bytes [0, 80)               |
 * +---------------------------------------------------------------+ 84
 * |                   (zero up to 128)                            |
 * +---------------------------------------------------------------+ 128
 * |   Mutable words 0..7 (8 x 8 bytes, not covered by the CRC)    |
 * +---------------------------------------------------------------+ 192
 * |                   (zero up to 4096)                           |
 * +---------------------------------------------------------------+ 4096: data area
 * </pre>
 *
 * <p>The header is a whole page so the data area starts page-aligned: a same-host client can map
 * the data area alone, and a DAX mapping stays aligned. Mutable words hold small persistent state
 * that changes after creation (the log's high-water mark).
 */
public final class PmFileHeader {
    public static final long MAGIC = 0x0100_4D50_4144_5245L; // "ERDAPM\0\1" little-endian
    public static final int FORMAT_VERSION = 1;

    public static final int MAGIC_OFFSET = 0;
    public static final int VERSION_OFFSET = 8;
    public static final int KIND_OFFSET = 12;
    public static final int HEADER_LENGTH_OFFSET = 16;
    public static final int DATA_LENGTH_OFFSET = 24;
    public static final int GEOMETRY_OFFSET = 32;
    public static final int GEOMETRY_SLOTS = 6;
    public static final int CRC_OFFSET = 80;
    public static final int MUTABLE_OFFSET = 128;
    public static final int MUTABLE_SLOTS = 8;
    public static final int LENGTH = 4096;

    /** File kinds; the value is stored in the header, and each kind of file has its own. */
    public static final int KIND_TABLE = 1;
    public static final int KIND_LOG_REGION = 2;
    public static final int KIND_HEAD_RECORDS = 3;
    /** The Read After Write baseline's ring (erda-server). */
    public static final int KIND_RAW_RING = 4;
    /** The Redo Logging baseline's log (erda-server); such files written before this kind existed say 3. */
    public static final int KIND_REDO_LOG = 5;
    /** The object pool of RDMP-KV's protocols (erda-server). */
    public static final int KIND_RDMP_POOL = 6;

    private PmFileHeader() {
    }

    public static long geometryOffset(int slot) {
        return GEOMETRY_OFFSET + 8L * checkSlot(slot, GEOMETRY_SLOTS, "geometry");
    }

    public static long mutableOffset(int slot) {
        return MUTABLE_OFFSET + 8L * checkSlot(slot, MUTABLE_SLOTS, "mutable");
    }

    private static int checkSlot(int slot, int slots, String what) {
        if (slot < 0 || slot >= slots) {
            throw new IndexOutOfBoundsException(what + " slot " + slot + " outside [0, " + slots + ")");
        }
        return slot;
    }

    /** Writes a fresh header (the caller persists it). */
    static void write(MemorySegment header, int kind, long dataLength, long[] geometry) {
        if (geometry.length > GEOMETRY_SLOTS) {
            throw new IllegalArgumentException("geometry has " + geometry.length + " slots, at most " + GEOMETRY_SLOTS);
        }
        header.asSlice(0, LENGTH).fill((byte) 0);
        header.set(Words.LONG_U, MAGIC_OFFSET, MAGIC);
        header.set(Words.INT_U, VERSION_OFFSET, FORMAT_VERSION);
        header.set(Words.INT_U, KIND_OFFSET, kind);
        header.set(Words.LONG_U, HEADER_LENGTH_OFFSET, LENGTH);
        header.set(Words.LONG_U, DATA_LENGTH_OFFSET, dataLength);
        for (int i = 0; i < geometry.length; i++) {
            header.set(Words.LONG_U, geometryOffset(i), geometry[i]);
        }
        header.set(Words.INT_U, CRC_OFFSET, crc(header));
    }

    /** Checks magic, version, kind and CRC; the message names what was found and what was expected. */
    static void check(MemorySegment header, String file, int expectedKind) {
        long magic = header.get(Words.LONG_U, MAGIC_OFFSET);
        if (magic != MAGIC) {
            throw new PmFormatException(String.format("%s: magic 0x%016x, expected 0x%016x (not an Erda PM file)",
                    file, magic, MAGIC));
        }
        PmFormatException.requireEqual(file, "format version", header.get(Words.INT_U, VERSION_OFFSET), FORMAT_VERSION);
        int storedCrc = header.get(Words.INT_U, CRC_OFFSET);
        int computed = crc(header);
        if (storedCrc != computed) {
            throw new PmFormatException(String.format("%s: header CRC 0x%08x, computed 0x%08x (corrupt header)",
                    file, storedCrc, computed));
        }
        PmFormatException.requireEqual(file, "file kind", header.get(Words.INT_U, KIND_OFFSET), expectedKind);
        PmFormatException.requireEqual(file, "header length", header.get(Words.LONG_U, HEADER_LENGTH_OFFSET), LENGTH);
    }

    private static int crc(MemorySegment header) {
        CRC32C crc = new CRC32C();
        crc.update(header.asSlice(0, CRC_OFFSET).asByteBuffer());
        return (int) crc.getValue();
    }
}
