package io.erda.protocol.memory;

/**
 * Layout of a 16-byte hopscotch hash entry (paper §3.2.3, Fig. 6; the full key lives in the object,
 * the entry keeps a fingerprint).
 *
 * <pre>
 *  0                   1                   2                   3
 *  0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1
 * +---------------------------------------------------------------+  0
 * |                  Atomic Word (8 bytes, {@link AtomicWord})     |
 * |                                                               |
 * +---------------+---------------+-------------------------------+  8
 * |    Flags      | Hop Distance  |            Head Id            |
 * +---------------+---------------+-------------------------------+ 12
 * |                   Key Fingerprint (32 bits)                   |
 * +---------------------------------------------------------------+ 16
 * </pre>
 *
 * <p>Bytes 8..15 are one little-endian "meta" word: fingerprint in bits 63..32, head id in 31..16,
 * hop distance (bucket index minus home bucket, &lt; H) in 15..8, flags in 7..0 with bit 0 = VALID.
 * An all-zero entry is empty. The hop distance lets the hop bitmaps be rebuilt from the entries
 * alone and lets a client reject entries of other home buckets in its window.
 */
public final class HashEntryLayout {
    public static final int ATOMIC_WORD_OFFSET = 0;
    public static final int META_OFFSET = 8;
    public static final int LENGTH = 16;

    public static final long FLAG_VALID = 1;
    public static final int MAX_HOP_DISTANCE = 0xFF;

    private static final int FINGERPRINT_SHIFT = 32;
    private static final int HEAD_SHIFT = 16;
    private static final int DISTANCE_SHIFT = 8;

    /** The bits of the meta word that hold the fingerprint, and those that hold the hop distance. */
    public static final long FINGERPRINT_BITS = 0xFFFF_FFFFL << FINGERPRINT_SHIFT;
    public static final long HOP_DISTANCE_BITS = (long) MAX_HOP_DISTANCE << DISTANCE_SHIFT;

    private HashEntryLayout() {
    }

    /** Meta word of a valid entry. */
    public static long meta(int fingerprint, int headId, int hopDistance) {
        if (headId < 0 || headId >= LogAddress.MAX_HEADS) {
            throw new IllegalArgumentException("head id " + headId + " outside [0, " + LogAddress.MAX_HEADS + ")");
        }
        if (hopDistance < 0 || hopDistance > MAX_HOP_DISTANCE) {
            throw new IllegalArgumentException("hop distance " + hopDistance + " outside [0, " + MAX_HOP_DISTANCE + "]");
        }
        return ((long) fingerprint << FINGERPRINT_SHIFT) | ((long) headId << HEAD_SHIFT)
                | ((long) hopDistance << DISTANCE_SHIFT) | FLAG_VALID;
    }

    /** Same entry at another hop distance (a hopscotch move). */
    public static long withHopDistance(long meta, int hopDistance) {
        return meta(fingerprint(meta), headId(meta), hopDistance);
    }

    /** The meta bits of hop distance {@code hopDistance} alone (no range check: for masks over a window). */
    public static long hopDistanceBits(int hopDistance) {
        return (long) hopDistance << DISTANCE_SHIFT;
    }

    public static boolean isValid(long meta) {
        return (meta & FLAG_VALID) != 0;
    }

    public static int fingerprint(long meta) {
        return (int) (meta >>> FINGERPRINT_SHIFT);
    }

    public static int headId(long meta) {
        return (int) ((meta >>> HEAD_SHIFT) & 0xFFFF);
    }

    public static int hopDistance(long meta) {
        return (int) ((meta >>> DISTANCE_SHIFT) & MAX_HOP_DISTANCE);
    }
}
