package io.erda.core.log;

import io.erda.core.layout.LogAddress;
import io.erda.core.pm.PmRegion;
import java.lang.foreign.MemorySegment;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.function.IntFunction;

/**
 * One head of the log: an ordered chain of regions (paper §3.2.2, Fig. 5) in which the server
 * reserves space that clients then fill with one-sided WRITEs (§3.3, §4.3).
 *
 * <p><b>Chain offsets.</b> Region {@code i} covers chain bytes {@code [i*regionSize, (i+1)*regionSize)};
 * splitting goes through {@link LogAddress}. Segments are aligned in the chain; the first
 * {@link LogGeometry#SEGMENT_HEADER_LENGTH} bytes of each are never an object, so chain offset 0 is
 * never an object and an entry offset of 0 can mean "none". A reservation that does not fit the
 * rest of its segment starts at the next segment; one that passes the region's end gets a successor
 * region file.
 *
 * <p><b>Tail recovery</b> (ARCHITECTURE rule 4). The tail is volatile. Each region persists a
 * "reserved up to" high-water mark (header mutable word {@link #HIGH_WATER_SLOT}, offset in the
 * region). When a reservation ends past it, the mark jumps to the reservation end rounded up to the
 * granule (4 KiB by default) with one persisted 8-byte store, so most PUTs cost no extra NVM byte
 * (one 8-byte store per granule of log). On open the tail is the last region's mark: every byte ever
 * handed out lies below it, so no new reservation overlaps an old, possibly torn or stale object;
 * at most one granule of slack per restart is lost. A forward scan could not do this: a reservation
 * whose client died leaves garbage lengths that cannot be skipped.
 *
 * <p><b>Threads.</b> {@link #reserve} is synchronized (many request threads of one server);
 * resolution and slices are safe from any thread.
 */
public final class LogHead implements AutoCloseable {
    /** Header mutable word of each region holding its high-water mark. */
    public static final int HIGH_WATER_SLOT = 0;

    private final int headId;
    private final LogGeometry geometry;
    private final IntFunction<PmRegion> newRegion;
    private final List<PmRegion> regions;
    private long tail;

    /**
     * Opens a head over its existing regions in chain order (none for a new head), creating regions
     * with {@code newRegion} (argument: region index) as the chain grows.
     */
    public LogHead(int headId, LogGeometry geometry, List<PmRegion> existing, IntFunction<PmRegion> newRegion) {
        this.headId = headId;
        this.geometry = geometry;
        this.newRegion = newRegion;
        this.regions = new CopyOnWriteArrayList<>(existing);
        if (regions.isEmpty()) {
            regions.add(newRegion.apply(0));
        }
        int last = regions.size() - 1;
        this.tail = LogAddress.chainOffset(last, highWater(regions.get(last)), geometry.regionSize());
    }

    public int headId() {
        return headId;
    }

    public LogGeometry geometry() {
        return geometry;
    }

    /** Chain offset of the next reservation (volatile state; see class comment). */
    public synchronized long tail() {
        return tail;
    }

    /**
     * Reserves {@code objectLength} bytes (8-byte aligned) and returns their chain offset. The
     * high-water mark is persisted before returning if the reservation passes it.
     */
    public synchronized long reserve(long objectLength) {
        if (objectLength <= 0 || objectLength % 8 != 0) {
            throw new IllegalArgumentException("object length " + objectLength + " is not a positive multiple of 8");
        }
        if (objectLength > geometry.maxObjectLength()) {
            throw new IllegalArgumentException("object length " + objectLength + " exceeds segment size "
                    + geometry.segmentSize() + " minus segment header " + LogGeometry.SEGMENT_HEADER_LENGTH);
        }
        long offset = tail;
        long segmentEnd = geometry.segmentStart(offset) + geometry.segmentSize();
        if (offset + objectLength > segmentEnd) {
            offset = segmentEnd; // paper §3.3: an object never spans two segments
        }
        if (offset == geometry.segmentStart(offset)) {
            offset += LogGeometry.SEGMENT_HEADER_LENGTH;
        }
        if (offset + objectLength > LogAddress.MAX_CHAIN_BYTES) {
            throw new IllegalStateException("head " + headId + " chain full: " + objectLength + " bytes at chain offset "
                    + offset + " pass the " + LogAddress.MAX_CHAIN_BYTES + "-byte limit");
        }
        int index = LogAddress.regionIndexForOffset(offset, geometry.regionSize());
        while (regions.size() <= index) {
            regions.add(newRegion.apply(regions.size())); // paper §3.2.2 Fig. 5: link a successor region
        }
        PmRegion region = regions.get(index);
        long end = LogAddress.offsetInRegion(offset, geometry.regionSize()) + objectLength;
        if (end > highWater(region)) {
            long granule = geometry.highWaterGranule();
            region.setMutableWord(HIGH_WATER_SLOT, Math.min((end + granule - 1) / granule * granule, geometry.regionSize()));
        }
        tail = offset + objectLength;
        return offset;
    }

    /** The persisted high-water mark of a region: every reserved byte of it lies below. */
    public static long highWater(PmRegion region) {
        return region.mutableWord(HIGH_WATER_SLOT);
    }

    /** Regions of the chain, in order. */
    public List<PmRegion> regions() {
        return List.copyOf(regions);
    }

    /** Resolves a chain offset to its region and offset in region. */
    public ChainPosition resolve(long chainOffset) {
        int index = LogAddress.regionIndexForOffset(chainOffset, geometry.regionSize());
        if (chainOffset < 0 || index >= regions.size()) {
            throw new IllegalArgumentException("chain offset " + chainOffset + " of head " + headId + " outside ["
                    + 0 + ", " + regions.size() * geometry.regionSize() + ")");
        }
        return new ChainPosition(index, LogAddress.offsetInRegion(chainOffset, geometry.regionSize()), regions.get(index));
    }

    /** The bytes {@code [chainOffset, chainOffset+length)}, which must lie in one region. */
    public MemorySegment slice(long chainOffset, long length) {
        ChainPosition position = resolve(chainOffset);
        if (position.offsetInRegion() + length > geometry.regionSize()) {
            throw new IllegalArgumentException(length + " bytes at chain offset " + chainOffset + " cross the end of region "
                    + position.regionIndex());
        }
        return position.region().data().asSlice(position.offsetInRegion(), length);
    }

    /** The head array entry a server sends to clients (without remote keys). */
    public HeadDescriptor describe() {
        List<HeadDescriptor.Region> described = new ArrayList<>();
        for (int i = 0; i < regions.size(); i++) {
            PmRegion region = regions.get(i);
            described.add(new HeadDescriptor.Region(i, region.path(), region.dataFileOffset(), region.dataLength()));
        }
        return new HeadDescriptor(headId, described);
    }

    /** Bytes the server stored into this head's regions (high-water marks, cleaner copies, zeroing). */
    public long localBytesWritten() {
        return regions.stream().mapToLong(PmRegion::localBytesWritten).sum();
    }

    @Override
    public void close() {
        regions.forEach(PmRegion::close);
    }
}
