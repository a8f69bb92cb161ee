package io.erda.core.log;

import io.erda.core.pm.PmRegion;
import io.erda.protocol.memory.LogAddress;
import io.erda.protocol.memory.LogGeometry;
import java.lang.foreign.MemorySegment;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentSkipListMap;
import java.util.concurrent.atomic.LongAdder;
import java.util.function.IntFunction;

/**
 * One head of the log: a {@link LogChain} of regions (paper §3.2.2, Fig. 5) in which the server
 * reserves space that clients then fill with one-sided WRITEs (§3.3, §4.3), and, while the head is
 * being cleaned (§4.4), a second, new chain.
 *
 * <p><b>Chain offsets.</b> Each region sits at a slot of the head's offset space: slot {@code s}
 * covers chain offsets {@code [s*regionSize, (s+1)*regionSize)} (see {@link LogChain} for why).
 * Segments are aligned in regions; the first {@link LogGeometry#SEGMENT_HEADER_LENGTH} bytes of each
 * are never an object, so chain offset 0 is never an object and an entry offset of 0 can mean
 * "none". A reservation that does not fit the rest of its segment starts at the next segment; one
 * that passes the region's end gets a successor region at the lowest free slot. A head that was
 * never cleaned uses slots 0, 1, 2, ... in order, as before slots existed.
 *
 * <p><b>Tail recovery</b> (docs/ARCHITECTURE.md, [recovery]). The tail is volatile. Each region persists a
 * "reserved up to" high-water mark (header mutable word {@link #HIGH_WATER_SLOT}, offset in the
 * region). When a reservation ends past it, the mark jumps to the reservation end rounded up to the
 * granule (4 KiB by default) with one persisted 8-byte store, so most PUTs cost no extra NVM byte
 * (one 8-byte store per granule of log). On open the tail is the last region's mark: every byte ever
 * handed out lies below it, so no new reservation overlaps an old, possibly torn or stale object;
 * at most one granule of slack per restart is lost. A forward scan could not do this: a reservation
 * whose client died leaves garbage lengths that cannot be skipped.
 *
 * <p><b>Cleaning</b> (driven by erda-cleaner): {@link #beginNewChain} creates the new chain,
 * {@link #reserveInNewChain} places the cleaner's copies, {@link #redirectWritesToNewChain} sends
 * {@link #reserve} there (replicate phase), {@link #switchToNewChain} makes it the head's chain and
 * {@link #retire} zeroes the old one ([recycled-memory]), hands its regions back to the factory (deleted, or
 * pooled for reuse: {@link RegionPool}) and frees its slots.
 *
 * <p><b>Regions made ahead</b> ({@link #prepareAhead}). Making a region file (create, extend, map, and whatever
 * the {@link io.erda.core.pm.MappingAdvice} does, such as checking its huge pages) takes milliseconds, which a
 * reservation that needs the next region would wait under the store's lock. Given an executor, the head makes the
 * next region of a chain in the background once that chain's tail passes half of its last region: the file gets its
 * real name and header (slot, generation, position) at once but joins the chain only when a reservation needs it;
 * a {@link SpareListener} hears of it on the preparer's thread (the server registers it with its fabric there).
 * A crash before that leaves a last region whose high-water mark is 0; open drops such a region (nothing was ever
 * reserved in it), so the tail stays where it was. A chain retired meanwhile deletes its spare.
 *
 * <p><b>Threads.</b> Reservations and chain changes are synchronized (many request threads of one
 * server, one cleaner); resolution and slices are safe from any thread.
 */
public final class LogHead implements AutoCloseable {
    /** Header mutable word of each region holding its high-water mark. */
    public static final int HIGH_WATER_SLOT = 0;

    /** Creates the region file of a chain at a slot, and takes back the regions no chain uses any more. */
    @FunctionalInterface
    public interface RegionFactory {
        PmRegion create(int slot, int generation, int position);

        /**
         * A region no chain uses, its data zero and persisted ({@link #retire}; a spare nothing was reserved in), no
         * longer registered with any fabric: deleted, or kept for a later {@link #create} ({@link RegionPool}).
         */
        default void recycle(PmRegion zeroed) {
            zeroed.closeAndDelete();
        }
    }

    /**
     * Told of spare regions ({@link #prepareAhead}): the server registers a spare with its fabric while it is made,
     * so the reservation that takes it does not wait for that either.
     */
    public interface SpareListener {
        SpareListener NONE = new SpareListener() {
            @Override
            public void made(int headId, PmRegion region) {
            }

            @Override
            public void discarded(int headId, PmRegion region) {
            }
        };

        /** On the preparer's thread, once the spare is made and before any chain can take it. */
        void made(int headId, PmRegion region);

        /** A spare no chain took is about to be deleted (its chain retired, or the head closed). */
        void discarded(int headId, PmRegion region);
    }

    /** Existing regions of one chain, in chain order, as found on open. */
    public record ChainRegions(int generation, List<Integer> slots, List<PmRegion> regions) {
        public ChainRegions {
            slots = List.copyOf(slots);
            regions = List.copyOf(regions);
        }
    }

    private final int headId;
    private final LogGeometry geometry;
    private final RegionFactory factory;
    private final int maxSlots;
    private final Map<Integer, PmRegion> bySlot = new ConcurrentSkipListMap<>();
    private final LongAdder retiredBytesWritten = new LongAdder();
    private final LongAdder retiredZeroedBytes = new LongAdder();
    private volatile LogChain current;
    private volatile LogChain next;
    private volatile LogChain writes;
    /** Makes spare regions in the background, or null: regions are made when needed. Guarded by this. */
    private java.util.concurrent.Executor preparer;
    /** Told of each spare as it is made and if it is discarded. */
    private volatile SpareListener spareListener = SpareListener.NONE;
    /** Regions {@link #reserveIn} appended to a chain, ever ({@link #regionsAppended}). Guarded by this. */
    private long regionsAppended;
    /** Bytes {@link #reserve} reserved in the write chain, ever ({@link #bytesReserved}). Guarded by this. */
    private long bytesReserved;
    /** The chain the spare is being made for, its slot and the region to come; all null without one. Guarded by this. */
    private LogChain spareChain;
    private Integer spareSlot;
    private java.util.concurrent.CompletableFuture<PmRegion> spare;

    /**
     * Opens a head over its existing regions at slots 0.. in chain order (none for a new head),
     * creating regions with {@code newRegion} (argument: slot) as the chain grows.
     */
    public LogHead(int headId, LogGeometry geometry, List<PmRegion> existing, IntFunction<PmRegion> newRegion) {
        this(headId, geometry, new ChainRegions(0, java.util.stream.IntStream.range(0, existing.size()).boxed().toList(),
                existing), null, (slot, generation, position) -> newRegion.apply(slot));
    }

    /**
     * Opens a head over the chain it serves ({@code current}; no regions for a new head) and, when it
     * was being cleaned, the new chain ({@code newChain}, else null).
     */
    public LogHead(int headId, LogGeometry geometry, ChainRegions current, ChainRegions newChain, RegionFactory factory) {
        this.headId = headId;
        this.geometry = geometry;
        this.factory = factory;
        this.maxSlots = (int) Math.min(geometry.maxRegions(), Integer.MAX_VALUE);
        this.current = open(current);
        this.next = newChain == null ? null : open(newChain);
        this.writes = this.current;
    }

    private LogChain open(ChainRegions chain) {
        if (chain.regions().isEmpty()) {
            int slot = lowestFreeSlot(chain.generation());
            PmRegion region = factory.create(slot, chain.generation(), 0);
            bySlot.put(slot, region);
            return new LogChain(chain.generation(), geometry.regionSize(), List.of(slot), List.of(region));
        }
        chain = withoutEmptyLast(chain);
        for (int i = 0; i < chain.slots().size(); i++) {
            if (bySlot.putIfAbsent(chain.slots().get(i), chain.regions().get(i)) != null) {
                throw new IllegalArgumentException("head " + headId + ": slot " + chain.slots().get(i) + " is in two chains");
            }
        }
        return new LogChain(chain.generation(), geometry.regionSize(), chain.slots(), chain.regions());
    }

    /**
     * The chain without last regions that hold nothing (high-water mark 0, not the first): a spare made ahead that
     * a crash left before any reservation reached it ({@link #prepareAhead}). Their files are zeroed and deleted.
     */
    private static ChainRegions withoutEmptyLast(ChainRegions chain) {
        int keep = chain.regions().size();
        while (keep > 1 && highWater(chain.regions().get(keep - 1)) == 0) {
            keep--;
        }
        if (keep == chain.regions().size()) {
            return chain;
        }
        for (PmRegion unused : chain.regions().subList(keep, chain.regions().size())) {
            zeroAndDelete(unused);
        }
        return new ChainRegions(chain.generation(), chain.slots().subList(0, keep), chain.regions().subList(0, keep));
    }

    /**
     * From now on makes the next region of a chain on {@code executor} once the chain's tail passes half of its last
     * region (see class comment); null: regions are made when a reservation needs them.
     */
    public synchronized void prepareAhead(java.util.concurrent.Executor executor) {
        this.preparer = executor;
        new SpareMaker(null, 0, 0, 0); // loads the class now, not in the PUT that needs the first spare
    }

    /** From now on tells {@code listener} of every spare made and discarded (see {@link SpareListener}). */
    public void onSpares(SpareListener listener) {
        this.spareListener = listener;
    }

    public int headId() {
        return headId;
    }

    public LogGeometry geometry() {
        return geometry;
    }

    /** The chain the head serves. */
    public LogChain currentChain() {
        return current;
    }

    /** The new chain while the head is being cleaned, else null. */
    public LogChain newChain() {
        return next;
    }

    /** The chain {@link #reserve} places objects in: the current one, or the new one during replication. */
    public LogChain writeChain() {
        return writes;
    }

    /** The chain holding {@code chainOffset}, or null if none does. */
    public LogChain chainOf(long chainOffset) {
        LogChain c = current;
        if (c.contains(chainOffset)) {
            return c;
        }
        LogChain n = next;
        return n != null && n.contains(chainOffset) ? n : null;
    }

    /** Chain offset of the next reservation (volatile state; see class comment). */
    public synchronized long tail() {
        return writes.tail();
    }

    /**
     * Reserves {@code objectLength} bytes (8-byte aligned) in the write chain and returns their chain
     * offset. The high-water mark is persisted before returning if the reservation passes it.
     */
    public synchronized long reserve(long objectLength) {
        long chainOffset = reserveIn(writes, objectLength);
        bytesReserved += objectLength;
        return chainOffset;
    }

    /** Reserves in the new chain (the cleaner's copies). */
    public synchronized long reserveInNewChain(long objectLength) {
        if (next == null) {
            throw new IllegalStateException("head " + headId + " has no new chain: it is not being cleaned");
        }
        return reserveIn(next, objectLength);
    }

    private long reserveIn(LogChain chain, long objectLength) {
        if (objectLength <= 0 || objectLength % 8 != 0) {
            throw new IllegalArgumentException("object length " + objectLength + " is not a positive multiple of 8");
        }
        if (objectLength > geometry.maxObjectLength()) {
            throw new IllegalArgumentException("object length " + objectLength + " exceeds segment size "
                    + geometry.segmentSize() + " minus segment header " + LogGeometry.SEGMENT_HEADER_LENGTH);
        }
        long regionSize = geometry.regionSize();
        long offset = chain.logicalTail();
        long segmentEnd = geometry.segmentStart(offset) + geometry.segmentSize();
        if (offset + objectLength > segmentEnd) {
            offset = segmentEnd; // paper §3.3: an object never spans two segments
        }
        if (offset >= chain.size() * regionSize) {
            int slot;
            PmRegion region;
            if (spareChain == chain) {
                slot = spareSlot;
                region = takeSpare();
            } else {
                slot = lowestFreeSlot(chain.generation());
                region = factory.create(slot, chain.generation(), chain.size()); // paper §3.2.2 Fig. 5
            }
            bySlot.put(slot, region);
            chain.append(slot, region);
            regionsAppended++;
        }
        if (offset == geometry.segmentStart(offset)) {
            offset += LogGeometry.SEGMENT_HEADER_LENGTH;
        }
        PmRegion region = chain.region(LogAddress.regionIndexForOffset(offset, regionSize));
        long end = LogAddress.offsetInRegion(offset, regionSize) + objectLength;
        if (end > highWater(region)) {
            long granule = geometry.highWaterGranule();
            region.setMutableWord(HIGH_WATER_SLOT, Math.min((end + granule - 1) / granule * granule, regionSize));
        }
        chain.setLogicalTail(offset + objectLength);
        if (preparer != null && spare == null && offset + objectLength - (long) (chain.size() - 1) * regionSize > regionSize / 2) {
            prepareSpare(chain);
        }
        return chain.physical(offset);
    }

    /** Starts making the next region of {@code chain} on the preparer (the caller holds this head's monitor). */
    private void prepareSpare(LogChain chain) {
        int slot = lowestFreeSlot(chain.generation());
        int generation = chain.generation();
        int position = chain.size();
        spareChain = chain;
        spareSlot = slot;
        spare = new java.util.concurrent.CompletableFuture<>();
        java.util.concurrent.CompletableFuture<PmRegion> made = spare;
        try {
            preparer.execute(new SpareMaker(made, slot, generation, position));
        } catch (java.util.concurrent.RejectedExecutionException shutDown) {
            made.completeExceptionally(shutDown);
        }
    }

    /**
     * Makes a spare on the preparer's thread and tells the {@link SpareListener}. A class of its own, loaded by
     * {@link #prepareAhead}, not a lambda linked at the first spare: the PUT that crossed half a region first ran a
     * cold path of milliseconds (deoptimised, interpreted, the lambda linked, the preparer's thread started).
     */
    private final class SpareMaker implements Runnable {
        private final java.util.concurrent.CompletableFuture<PmRegion> made;
        private final int slot;
        private final int generation;
        private final int position;

        SpareMaker(java.util.concurrent.CompletableFuture<PmRegion> made, int slot, int generation, int position) {
            this.made = made;
            this.slot = slot;
            this.generation = generation;
            this.position = position;
        }

        @Override
        public void run() {
            PmRegion region;
            try {
                region = factory.create(slot, generation, position);
            } catch (Throwable t) {
                made.completeExceptionally(t);
                return;
            }
            try {
                spareListener.made(headId, region);
            } finally {
                made.complete(region); // a listener that failed (it logs why) leaves the region as made
            }
        }
    }

    /**
     * The spare, waited for if it is still being made; clears it. If making it failed, the failure is thrown here,
     * where the chain needs the region, as it would have been had the region been made then.
     */
    private PmRegion takeSpare() {
        java.util.concurrent.CompletableFuture<PmRegion> made = spare;
        spareChain = null;
        spareSlot = null;
        spare = null;
        try {
            return made.join();
        } catch (java.util.concurrent.CompletionException e) {
            if (e.getCause() instanceof RuntimeException r) {
                throw r;
            }
            throw e;
        }
    }

    /** Deletes the spare if it was made for {@code chain} (any chain if null); the caller holds this head's monitor. */
    private void discardSpare(LogChain chain) {
        if (spare == null || chain != null && spareChain != chain) {
            return;
        }
        PmRegion unused;
        try {
            unused = takeSpare();
        } catch (RuntimeException failed) {
            return; // it was never made: nothing to delete
        }
        spareListener.discarded(headId, unused);
        factory.recycle(unused); // nothing was reserved in it: zero but for its header
    }

    private int lowestFreeSlot(int generation) {
        for (int slot = 0; slot < maxSlots; slot++) {
            if (!bySlot.containsKey(slot) && !Integer.valueOf(slot).equals(spareSlot)) {
                return slot;
            }
        }
        throw new IllegalStateException("head " + headId + " chain full: all " + maxSlots + " region slots of the "
                + LogAddress.MAX_CHAIN_BYTES + "-byte offset space are in use (growing chain generation " + generation + ")");
    }

    /** Starts cleaning: creates the new chain (generation + 1) at the lowest free slot. */
    public synchronized LogChain beginNewChain() {
        if (next != null) {
            throw new IllegalStateException("head " + headId + " already has a new chain " + next);
        }
        int generation = current.generation() + 1;
        int slot = lowestFreeSlot(generation);
        PmRegion region = factory.create(slot, generation, 0);
        bySlot.put(slot, region);
        next = new LogChain(generation, geometry.regionSize(), List.of(slot), List.of(region));
        return next;
    }

    /** Replication phase: from now on {@link #reserve} places objects in the new chain. */
    public synchronized void redirectWritesToNewChain() {
        if (next == null) {
            throw new IllegalStateException("head " + headId + " has no new chain to redirect writes to");
        }
        writes = next;
    }

    /** Makes the new chain the head's chain; returns the old one, still mapped until {@link #retire}. */
    public synchronized LogChain switchToNewChain() {
        if (next == null) {
            throw new IllegalStateException("head " + headId + " has no new chain to switch to");
        }
        LogChain old = current;
        current = next;
        writes = next;
        next = null;
        return old;
    }

    /**
     * Zeroes every region of a chain the head no longer uses up to its high-water mark
     * ([recycled-memory]: above it nothing was ever reserved, and a sparse file reads zero),
     * persists that, hands the regions to the factory ({@link RegionFactory#recycle}: deleted, or kept
     * zeroed for reuse) and frees the slots.
     */
    public void retire(LogChain old) {
        synchronized (this) {
            if (old == current || old == next) {
                throw new IllegalStateException("head " + headId + " still uses " + old);
            }
            discardSpare(old);
        }
        for (int i = 0; i < old.size(); i++) {
            int slot = old.slots().get(i);
            PmRegion region = old.regions().get(i);
            long before = region.localBytesWritten();
            region.zeroForReuse(highWater(region));
            long after = region.localBytesWritten();
            retiredZeroedBytes.add(after - before);
            retiredBytesWritten.add(after);
            // not under the monitor: recycling renames or deletes the file and unmaps it (milliseconds), and every
            // reservation of the head waited for it there. The slot stays taken until the region is recycled, so its
            // name is free before a reservation may take the slot and create it anew.
            try {
                factory.recycle(region);
            } finally {
                bySlot.remove(slot, region); // if recycling failed, the region is closed and deleted all the same
            }
        }
    }

    /**
     * Zeroes a region no chain uses up to its high-water mark ([recycled-memory]; above it nothing
     * was ever reserved), unmaps it and deletes its file (also for region files open finds in no
     * chain).
     */
    public static void zeroAndDelete(PmRegion region) {
        region.zeroForReuse(highWater(region));
        region.closeAndDelete();
    }

    /** The persisted high-water mark of a region: every reserved byte of it lies below. */
    public static long highWater(PmRegion region) {
        return region.mutableWord(HIGH_WATER_SLOT);
    }

    /** How many regions {@link #regions()} lists, without copying them (a PUT asks whether its chain grew). */
    public int regionCount() {
        return bySlot.size();
    }

    /**
     * How many regions reservations have appended to this head's chains so far (only grows): a caller that compares
     * it before and after a reservation learns whether that reservation grew a chain, which {@link #regionCount} cannot
     * tell it, since a cleaning retires regions of the same head without the caller's lock ({@link #retire}).
     */
    public synchronized long regionsAppended() {
        return regionsAppended;
    }

    /**
     * Bytes {@link #reserve} has reserved in the write chain so far (only grows): the server's reservations and blocks,
     * and a cleaner's copies only while the head has no new chain (during a run they go through
     * {@link #reserveInNewChain}). Compared before and after, what clients appended meanwhile.
     */
    public synchronized long bytesReserved() {
        return bytesReserved;
    }

    /** Every mapped region of the head (both chains while cleaning), in slot order. */
    public List<PmRegion> regions() {
        return List.copyOf(bySlot.values());
    }

    /** Resolves a chain offset to its slot (reported as region index) and offset in region. */
    public ChainPosition resolve(long chainOffset) {
        int slot = chainOffset < 0 ? -1 : LogAddress.regionIndexForOffset(chainOffset, geometry.regionSize());
        PmRegion region = slot < 0 ? null : bySlot.get(slot);
        if (region == null) {
            throw new IllegalArgumentException("chain offset " + chainOffset + " of head " + headId
                    + " lies in no region (mapped slots " + bySlot.keySet() + " of " + geometry.regionSize() + " bytes)");
        }
        return new ChainPosition(slot, LogAddress.offsetInRegion(chainOffset, geometry.regionSize()), region);
    }

    /** Whether {@code [chainOffset, chainOffset+length)} lies inside one mapped region. */
    public boolean isMapped(long chainOffset, long length) {
        long regionSize = geometry.regionSize();
        return chainOffset >= 0 && length >= 0 && bySlot.containsKey(LogAddress.regionIndexForOffset(chainOffset, regionSize))
                && LogAddress.offsetInRegion(chainOffset, regionSize) + length <= regionSize;
    }

    /**
     * Whether {@code [chainOffset, chainOffset+length)} was handed out by a reservation: inside one
     * region of a chain of the head and below that chain's tail.
     */
    public boolean isReserved(long chainOffset, long length) {
        LogChain chain = chainOf(chainOffset);
        if (chain == null || length < 0 || !isMapped(chainOffset, length)) {
            return false;
        }
        return chain.logical(chainOffset) + length <= chain.logicalTail();
    }

    /**
     * A key that orders the head's objects as they were appended: the current chain's in chain
     * order, then the new chain's (the cleaner's copies and later writes); chains may sit at any
     * slots, so offsets alone do not order them. {@link Long#MAX_VALUE} for an offset in no chain.
     */
    public long logOrder(long chainOffset) {
        LogChain c = current;
        long logical = c.logical(chainOffset);
        if (logical >= 0) {
            return logical;
        }
        LogChain n = next;
        logical = n == null ? -1 : n.logical(chainOffset);
        return logical >= 0 ? LogAddress.MAX_CHAIN_BYTES + logical : Long.MAX_VALUE;
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

    /** The head array entry a server sends to clients (without remote keys): every mapped region by slot. */
    public HeadDescriptor describe() {
        List<HeadDescriptor.Region> described = new ArrayList<>();
        for (Map.Entry<Integer, PmRegion> e : bySlot.entrySet()) {
            PmRegion region = e.getValue();
            described.add(new HeadDescriptor.Region(e.getKey(), region.path(), region.dataFileOffset(), region.dataLength()));
        }
        described.sort(Comparator.comparingInt(HeadDescriptor.Region::regionIndex));
        return new HeadDescriptor(headId, described);
    }

    /** Bytes {@link #retire} wrote zeroing retired regions ([recycled-memory]): part of {@link #localBytesWritten}. */
    public long retiredZeroedBytes() {
        return retiredZeroedBytes.sum();
    }

    /** Bytes the server stored into this head's regions (high-water marks, cleaner copies, zeroing). */
    public long localBytesWritten() {
        return retiredBytesWritten.sum() + bySlot.values().stream().mapToLong(PmRegion::localBytesWritten).sum();
    }

    /** Unmaps every region; a spare made ahead that no chain took is deleted (it holds only its header). */
    @Override
    public void close() {
        synchronized (this) {
            discardSpare(null);
        }
        bySlot.values().forEach(PmRegion::close);
    }
}
