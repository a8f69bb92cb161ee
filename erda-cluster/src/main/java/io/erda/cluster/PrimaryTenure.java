package io.erda.cluster;

import io.erda.cluster.client.MapLease;
import io.erda.cluster.client.ShardMap;

/**
 * When a member may begin to acknowledge PUTs of the shards it is primary of ([cluster], "Fencing"): not before
 * {@link MapLease#promotionWaitNanos()} after it learned it became primary, so that every client whose map still
 * names the previous primary has seen its map lease run out. Maps are observed in epoch order; where epochs were
 * skipped (ZooKeeper's watches may coalesce changes) the member cannot know whether it lost and regained a shard in
 * between, and counts every shard it is primary of as newly gained.
 */
final class PrimaryTenure {
    private static final java.util.logging.Logger LOG = java.util.logging.Logger.getLogger(PrimaryTenure.class.getName());
    private final int id;
    private final long waitNanos;
    private long epoch = -1;
    private final boolean[] primary;
    private final long[] since;
    private final java.util.function.LongSupplier clock;

    PrimaryTenure(int id, int shards, long waitNanos) {
        this(id, shards, waitNanos, System::nanoTime);
    }

    /** With {@code clock} in place of {@link System#nanoTime()} (tests step it by hand). */
    PrimaryTenure(int id, int shards, long waitNanos, java.util.function.LongSupplier clock) {
        this.id = id;
        this.waitNanos = waitNanos;
        this.clock = clock;
        this.primary = new boolean[shards];
        this.since = new long[shards];
    }

    /** Takes in {@code map} (as this member, registered under {@code session}) if it is newer than the last one seen. */
    synchronized void observe(ShardMap map, long session) {
        if (map == null || map.epoch() <= epoch) {
            return;
        }
        boolean gap = epoch < 0 || map.epoch() > epoch + 1;
        long now = clock.getAsLong();
        java.util.List<Integer> gained = new java.util.ArrayList<>();
        for (int s = 0; s < primary.length; s++) {
            boolean p = map.primary(s) == id && map.names(id, session);
            if (p && (!primary[s] || gap)) {
                since[s] = now;
                gained.add(s);
            }
            primary[s] = p;
        }
        epoch = map.epoch();
        if (!gained.isEmpty()) {
            LOG.info(() -> "server " + id + ": primary of shard(s) " + gained + " by map epoch " + map.epoch()
                    + "; acknowledges their PUTs in " + waitNanos / 1_000_000 + " ms");
        }
    }

    /**
     * Nanoseconds until PUTs of {@code shard} may be acknowledged here (0 or less: now); 0 for a shard the last map
     * seen does not name this member primary of (refused elsewhere, by the map itself).
     */
    synchronized long remainingNanos(int shard) {
        return primary[shard] ? since[shard] + waitNanos - clock.getAsLong() : 0;
    }
}
