package io.erda.protocol.memory;

/**
 * Sizes of a head's chain (paper §3.2.2: 1 GiB regions cut into 8 MiB segments).
 *
 * @param regionSize       data bytes of one region file; a multiple of the segment size
 * @param segmentSize      bytes of a segment; objects never span two; its first
 *                         {@link #SEGMENT_HEADER_LENGTH} bytes are never an object
 * @param highWaterGranule step in which the persistent high-water mark advances (erda-core's {@code LogHead})
 */
public record LogGeometry(long regionSize, long segmentSize, long highWaterGranule) {
    /** Bytes at the start of each segment that hold no object: chain offset 0 must never be one. */
    public static final int SEGMENT_HEADER_LENGTH = 8;
    public static final long DEFAULT_REGION_SIZE = 1L << 30;
    public static final long DEFAULT_SEGMENT_SIZE = 8L << 20;
    public static final long DEFAULT_HIGH_WATER_GRANULE = 4096;

    public LogGeometry {
        if (segmentSize <= SEGMENT_HEADER_LENGTH || segmentSize % 8 != 0) {
            throw new IllegalArgumentException("segment size " + segmentSize + " is not a multiple of 8 above "
                    + SEGMENT_HEADER_LENGTH);
        }
        if (regionSize <= 0 || regionSize % segmentSize != 0) {
            throw new IllegalArgumentException("segment size " + segmentSize + " does not divide region size " + regionSize);
        }
        if (regionSize > LogAddress.MAX_CHAIN_BYTES) {
            throw new IllegalArgumentException("region size " + regionSize + " exceeds the chain limit " + LogAddress.MAX_CHAIN_BYTES);
        }
        if (highWaterGranule <= 0 || highWaterGranule % 8 != 0) {
            throw new IllegalArgumentException("high-water granule " + highWaterGranule + " is not a positive multiple of 8");
        }
    }

    public static LogGeometry defaults() {
        return new LogGeometry(DEFAULT_REGION_SIZE, DEFAULT_SEGMENT_SIZE, DEFAULT_HIGH_WATER_GRANULE);
    }

    /** Largest object a segment holds. */
    public long maxObjectLength() {
        return segmentSize - SEGMENT_HEADER_LENGTH;
    }

    /** Chain offset where the segment holding {@code chainOffset} starts. */
    public long segmentStart(long chainOffset) {
        return chainOffset - chainOffset % segmentSize;
    }

    /** Most regions a chain can have (16 GiB of chain). */
    public long maxRegions() {
        return LogAddress.MAX_CHAIN_BYTES / regionSize;
    }
}
