package io.erda.protocol.memory;

/**
 * Where things are in the data area of a hopscotch table file; the server sends these three numbers
 * to clients, which compute the same byte ranges for their one-sided READs.
 *
 * <pre>
 * data area:
 * +-----------------------------------------------+-----+---------------------------+
 * | buckets 0 .. capacity+H-2, 16 bytes each      | pad | stripe versions, 8 B each |
 * +-----------------------------------------------+-----+---------------------------+
 * 0                                   stripeVersionsOffset (64-byte aligned)
 * </pre>
 *
 * <p>Home buckets are {@code [0, capacity)}; the H-1 overflow buckets after the last home bucket
 * make every neighbourhood {@code [b, b+H)} one contiguous range, with no wrap-around. Stripe
 * {@code s} covers buckets {@code [s*S, (s+1)*S)} with S = {@code stripeSize} &gt;= H, so one window
 * spans at most two stripes.
 *
 * @param capacity      home buckets, a power of two
 * @param neighbourhood H, buckets per neighbourhood (at most 64: hop bitmaps are longs)
 * @param stripeSize    buckets per stripe version word, &gt;= H
 */
public record TableGeometry(long capacity, int neighbourhood, int stripeSize) {
    public static final int MAX_NEIGHBOURHOOD = 64;
    /** Largest capacity: positions are ints. */
    public static final long MAX_CAPACITY = 1L << 30;

    public TableGeometry {
        if (neighbourhood < 2 || neighbourhood > MAX_NEIGHBOURHOOD) {
            throw new IllegalArgumentException("neighbourhood " + neighbourhood + " outside [2, " + MAX_NEIGHBOURHOOD + "]");
        }
        if (Long.bitCount(capacity) != 1 || capacity < neighbourhood || capacity > MAX_CAPACITY) {
            throw new IllegalArgumentException("capacity " + capacity + " is not a power of two in ["
                    + neighbourhood + ", " + MAX_CAPACITY + "]");
        }
        if (stripeSize < neighbourhood) {
            throw new IllegalArgumentException("stripe size " + stripeSize + " is below neighbourhood " + neighbourhood);
        }
    }

    /** Geometry for at least {@code requested} home buckets: rounded up to a power of two (and to at least H). */
    public static TableGeometry forCapacity(long requested, int neighbourhood) {
        if (requested < 1 || requested > MAX_CAPACITY) {
            throw new IllegalArgumentException("capacity " + requested + " outside [1, " + MAX_CAPACITY + "]");
        }
        long capacity = Math.max(Long.highestOneBit(requested - 1) << 1, 1);
        return new TableGeometry(Math.max(capacity, Long.highestOneBit(neighbourhood - 1) << 1), neighbourhood, neighbourhood);
    }

    /** Buckets in the file: home buckets plus H-1 overflow buckets. */
    public long bucketCount() {
        return capacity + neighbourhood - 1;
    }

    public long homeBucket(long keyHash) {
        return KeyHash.homeBucket(keyHash, capacity);
    }

    /** Data-area offset of bucket {@code bucket}. */
    public long bucketOffset(long bucket) {
        return bucket * HashEntryLayout.LENGTH;
    }

    /** Data-area offset of the neighbourhood window of home bucket {@code home} (one READ). */
    public long windowOffset(long home) {
        return bucketOffset(home);
    }

    /** Bytes of one window: H entries. */
    public int windowLength() {
        return neighbourhood * HashEntryLayout.LENGTH;
    }

    public long stripeCount() {
        return (bucketCount() + stripeSize - 1) / stripeSize;
    }

    public long stripeOf(long bucket) {
        return bucket / stripeSize;
    }

    public long stripeVersionsOffset() {
        return (bucketOffset(bucketCount()) + 63) & -64L;
    }

    /** Data-area offset of the version word of stripe {@code stripe}. */
    public long stripeVersionOffset(long stripe) {
        return stripeVersionsOffset() + stripe * Long.BYTES;
    }

    /** Data-area offset of the version words covering the window of {@code home} (one READ). */
    public long windowVersionsOffset(long home) {
        return stripeVersionOffset(stripeOf(home));
    }

    /** Bytes of the version words covering the window of {@code home}: 8 or 16. */
    public int windowVersionsLength(long home) {
        return (int) (stripeOf(home + neighbourhood - 1) - stripeOf(home) + 1) * Long.BYTES;
    }

    /** Length of the table file's data area. */
    public long dataLength() {
        return stripeVersionOffset(stripeCount());
    }
}
