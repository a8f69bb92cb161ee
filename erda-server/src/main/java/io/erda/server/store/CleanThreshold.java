package io.erda.server.store;

/**
 * When the log cleaner cleans a head (paper §4.4): never ({@link #OFF}), once its chain occupies more than a fixed
 * number of bytes, or {@link #AUTO}: once the chain holds at least three regions and more than twice the head's live
 * bytes.
 *
 * <p>Why that rule: a chain of three regions has at least one whole region that can only hold garbage or live data,
 * and cleaning a chain of more than twice the live bytes frees at least half of what it reads, so the copying a head
 * costs is bounded by the bytes written to it (as in any log-structured store with a utilisation bound). The live bytes
 * are what the head's last cleaning kept (the cleaner copies only current versions), so the threshold follows the data:
 * a head whose live data grows is cleaned less often, never back to back for nothing. Before a head's first cleaning
 * since the server started its live bytes are not known, and count as 0: its first run comes at three regions.
 *
 * @param bytes the fixed threshold, or 0 (with {@code auto} false: never clean)
 * @param auto  whether the threshold follows each head's region size and live bytes
 */
public record CleanThreshold(long bytes, boolean auto) {
    /** Never clean (an interrupted run is still rolled forward at start). */
    public static final CleanThreshold OFF = new CleanThreshold(0, false);
    /** Clean a head once its chain holds three regions and more than twice its live bytes. */
    public static final CleanThreshold AUTO = new CleanThreshold(0, true);
    /** Regions a head's chain spans before {@link #AUTO} cleans it. */
    public static final int AUTO_REGIONS = 3;

    public CleanThreshold {
        if (bytes < 0) {
            throw new IllegalArgumentException("clean threshold " + bytes + " bytes is negative");
        }
        if (auto && bytes != 0) {
            throw new IllegalArgumentException("an automatic clean threshold has no byte count (got " + bytes + ")");
        }
    }

    /** A fixed threshold of {@code bytes} (0: never). */
    public static CleanThreshold of(long bytes) {
        return bytes == 0 ? OFF : new CleanThreshold(bytes, false);
    }

    /** Whether the cleaner cleans heads at all (an interrupted run is rolled forward either way). */
    public boolean enabled() {
        return auto || bytes > 0;
    }

    /**
     * The chain bytes above which a head is cleaned, given the store's region size and the head's live bytes (0 when
     * not known); {@link Long#MAX_VALUE} when cleaning is off.
     */
    public long forHead(long regionSize, long liveBytes) {
        if (auto) {
            return Math.max((AUTO_REGIONS - 1) * regionSize, 2 * liveBytes);
        }
        return bytes > 0 ? bytes : Long.MAX_VALUE;
    }

    /**
     * The regions the pool keeps by default ({@code --region-pool}): as many as all heads' chains span at the
     * threshold, one per head at least; for {@link #AUTO}, what a chain spans when its first cleaning begins.
     */
    public int defaultPool(int heads, long regionSize) {
        long perHeadBytes = auto ? (AUTO_REGIONS - 1) * regionSize : bytes;
        return io.erda.core.log.RegionPool.capacityFor(heads, regionSize, perHeadBytes);
    }

    @Override
    public String toString() {
        return auto ? "auto" : Long.toString(bytes);
    }
}
