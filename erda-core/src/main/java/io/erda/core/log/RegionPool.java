package io.erda.core.log;

import io.erda.core.pm.PmRegion;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayDeque;
import java.util.List;
import java.util.function.Supplier;
import java.util.regex.Pattern;
import java.util.stream.Stream;

/**
 * Retired log regions kept for reuse instead of deleted ([recycled-memory]). A region the cleaner retired is zeroed
 * up to its high-water mark and persisted ({@link LogHead#retire}); with room here it is renamed {@code pool-NNNNN.pm}
 * and stays mapped, and the next region any head of the store needs is that file: its header rewritten (head, slot,
 * generation, position) and persisted under the pool name, then linked under the region's name
 * ({@link PmRegion#relink}).
 *
 * <p><b>Why.</b> A new region is a new file whose pages the kernel must find, zero and map as the log first touches
 * them. On a VM whose balloon reports free memory to the host (virtio free page reporting) each such 4 KiB page was a
 * host fault of ~11 µs once the guest had no recently freed memory left: one PUT in four paid it (a 1 KiB object
 * per 4 KiB page). A recycled region's pages are the store's own, already backed and in the page cache. On DAX PM a
 * new file's blocks are allocated and zeroed at first fault in the same way, and file creation and mapping cost
 * milliseconds.
 *
 * <p><b>Bounded.</b> At most {@link #capacity()} regions wait here (the server's {@code --region-pool}; by default
 * as many as all heads' chains span at the cleaning threshold, so the store never holds more memory than its chains
 * did before they were cleaned); a retired region beyond that is deleted as before.
 *
 * <p><b>Crash rules.</b> A pool file is never part of a chain: open deletes every {@code pool-*} file
 * ({@link #deleteLeftovers}), so a crash at any point of a rename or header rewrite leaves either a pool file (gone
 * at open) or a region file that is whole: a recycled region's header is rewritten and persisted under its pool name
 * first, and its data was zero up to its old high-water mark and never written above it. A region linked under its
 * new name before the crash is a spare made ahead (high-water mark 0: open drops it) or a new chain's first region,
 * as a freshly created one would have been.
 *
 * <p>Thread-safe: retiring (the cleaner) and making regions (the preparer, a PUT, the cleaner) may race.
 */
public final class RegionPool implements AutoCloseable {
    /** Names of pooled region files (and their durable images under power-failure emulation). */
    public static final Pattern POOL_FILE = Pattern.compile("pool-\\d{5,}\\.pm(\\..*)?");

    private final Path directory;
    private final ArrayDeque<PmRegion> zeroed = new ArrayDeque<>();
    private int capacity;
    private long nextName;
    private long reused;
    private long deleted;
    private boolean closed;

    /** An empty pool for the store in {@code directory} that keeps no region until {@link #capacity(int)} is set. */
    public RegionPool(Path directory) {
        this.directory = directory;
    }

    /** The default capacity: as many regions as {@code heads} chains of {@code threshold} bytes span (1 per head at least). */
    public static int capacityFor(int heads, long regionSize, long threshold) {
        long perHead = Math.max(1, (threshold + regionSize - 1) / regionSize);
        return (int) Math.min(Integer.MAX_VALUE, heads * perHead);
    }

    /** Keeps at most {@code regions} (0: none, every retired region is deleted); extra ones are deleted now. */
    public void capacity(int regions) {
        if (regions < 0) {
            throw new IllegalArgumentException("region pool capacity " + regions + " is negative");
        }
        List<PmRegion> extra;
        synchronized (this) {
            capacity = regions;
            extra = new java.util.ArrayList<>();
            while (zeroed.size() > capacity) {
                extra.add(zeroed.pollLast());
            }
            deleted += extra.size();
        }
        extra.forEach(PmRegion::closeAndDelete);
    }

    public synchronized int capacity() {
        return capacity;
    }

    /** Regions waiting to be reused now. */
    public synchronized int size() {
        return zeroed.size();
    }

    /** Regions made from the pool so far (instead of new files). */
    public synchronized long reused() {
        return reused;
    }

    /** Retired regions deleted so far because the pool was full (or shrunk). */
    public synchronized long deleted() {
        return deleted;
    }

    /**
     * A pooled region as the region file {@code name} with {@code geometry} in its header (see {@link PmRegion#relink}),
     * or a new file from {@code create} when the pool is empty.
     */
    public PmRegion take(Path name, long[] geometry, Supplier<PmRegion> create) {
        PmRegion region;
        synchronized (this) {
            region = zeroed.pollFirst();
            if (region != null) {
                reused++;
            }
        }
        if (region == null) {
            return create.get();
        }
        try {
            return region.relink(name, geometry);
        } catch (RuntimeException e) {
            region.closeAndDelete();
            throw e;
        }
    }

    /**
     * Takes a region no chain uses any more, zeroed up to its high-water mark and persisted (its data is zero
     * throughout: above that mark nothing was ever reserved): kept under a pool name if there is room, else deleted.
     * The caller has deregistered it from every fabric, so no client reaches it until it is a region again.
     */
    public void give(PmRegion zeroedRegion) {
        Path poolName;
        synchronized (this) {
            if (closed || zeroed.size() >= capacity) {
                deleted++;
                poolName = null;
            } else {
                poolName = directory.resolve(String.format("pool-%05d.pm", nextName++));
            }
        }
        if (poolName == null) {
            zeroedRegion.closeAndDelete();
            return;
        }
        PmRegion kept;
        try {
            kept = zeroedRegion.relink(poolName, null);
        } catch (RuntimeException e) {
            zeroedRegion.closeAndDelete();
            throw e;
        }
        boolean late;
        synchronized (this) {
            late = closed;
            if (!late) {
                zeroed.addLast(kept);
            }
        }
        if (late) {
            kept.closeAndDelete();
        }
    }

    /** Deletes the pool files a previous run left (open calls this before it maps anything). */
    public static void deleteLeftovers(Path directory) {
        try (Stream<Path> listing = Files.list(directory)) {
            for (Path file : listing.filter(f -> POOL_FILE.matcher(f.getFileName().toString()).matches()).toList()) {
                Files.deleteIfExists(file);
            }
        } catch (IOException e) {
            throw new UncheckedIOException("cannot delete pooled regions in " + directory, e);
        }
    }

    /** Deletes every pooled region; regions given later are deleted at once. */
    @Override
    public void close() {
        List<PmRegion> all;
        synchronized (this) {
            closed = true;
            all = List.copyOf(zeroed);
            zeroed.clear();
        }
        all.forEach(PmRegion::closeAndDelete);
    }
}
