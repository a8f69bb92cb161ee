package io.erda.protocol.memory;

/**
 * A location in the log: a head id and a chain offset (BookKeeper-style packed long with named
 * helpers; nobody else shifts these bits).
 *
 * <pre>
 *  63        48 47            31 30                               0
 * +------------+----------------+---------------------------------+
 * | Head Id(16)|   zero (17)    |   Chain Offset (31, 8-byte units)|
 * +------------+----------------+---------------------------------+
 * </pre>
 *
 * <p>A head's chain is the concatenation of its regions (paper §3.2.2, Fig. 5): region {@code i}
 * covers chain byte offsets {@code [i*regionSize, (i+1)*regionSize)}. Chain offsets in entries are
 * in 8-byte units ({@link AtomicWord}), so a chain holds at most 16 GiB; unit 0 is "none", which is
 * why the first 8 bytes of every chain (a segment header) never hold an object.
 */
public final class LogAddress {
    public static final int UNIT = 8;
    public static final int MAX_HEADS = 1 << 16;
    /** Largest chain length in bytes: 2^31 units of 8 bytes. */
    public static final long MAX_CHAIN_BYTES = (AtomicWord.MAX_OFFSET + 1) * UNIT;

    private static final int HEAD_SHIFT = 48;

    private LogAddress() {
    }

    public static long pack(int headId, long offsetUnits) {
        if (headId < 0 || headId >= MAX_HEADS) {
            throw new IllegalArgumentException("head id " + headId + " outside [0, " + MAX_HEADS + ")");
        }
        if (offsetUnits < 0 || offsetUnits > AtomicWord.MAX_OFFSET) {
            throw new IllegalArgumentException("chain offset " + offsetUnits + " units outside [0, " + AtomicWord.MAX_OFFSET + "]");
        }
        return ((long) headId << HEAD_SHIFT) | offsetUnits;
    }

    public static int headId(long address) {
        return (int) (address >>> HEAD_SHIFT);
    }

    public static long offsetUnits(long address) {
        return address & AtomicWord.MAX_OFFSET;
    }

    /** Chain byte offset of an offset in 8-byte units. */
    public static long bytesForUnits(long units) {
        return units * UNIT;
    }

    /** Offset in 8-byte units of a chain byte offset, which must be 8-byte aligned and fit 31 bits. */
    public static long unitsForBytes(long chainByteOffset) {
        if (chainByteOffset % UNIT != 0) {
            throw new IllegalArgumentException("chain offset " + chainByteOffset + " is not a multiple of " + UNIT);
        }
        long units = chainByteOffset / UNIT;
        if (units < 0 || units > AtomicWord.MAX_OFFSET) {
            throw new IllegalArgumentException("chain offset " + chainByteOffset + " outside [0, " + MAX_CHAIN_BYTES + ")");
        }
        return units;
    }

    /** Index of the region of the chain holding {@code chainByteOffset}. */
    public static int regionIndexForOffset(long chainByteOffset, long regionSize) {
        return Math.toIntExact(chainByteOffset / regionSize);
    }

    /** Offset inside its region of {@code chainByteOffset}. */
    public static long offsetInRegion(long chainByteOffset, long regionSize) {
        return chainByteOffset % regionSize;
    }

    /** Chain byte offset of {@code offsetInRegion} inside region {@code regionIndex}. */
    public static long chainOffset(int regionIndex, long offsetInRegion, long regionSize) {
        return regionIndex * regionSize + offsetInRegion;
    }
}
