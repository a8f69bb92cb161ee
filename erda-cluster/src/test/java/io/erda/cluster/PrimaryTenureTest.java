package io.erda.cluster;

import static org.assertj.core.api.Assertions.assertThat;

import io.erda.cluster.client.ShardMap;
import java.util.TreeMap;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;

/** When a member newly named primary of a shard may acknowledge PUTs of it ({@link PrimaryTenure}). */
class PrimaryTenureTest {
    private static final long WAIT = 60_000_000_000L; // longer than the test, so a wait under way stays visible
    private static final long SESSION_1 = 11;
    private static final long SESSION_2 = 22;

    /** Two shards: shard 0 led by {@code primary0}, shard 1 by server 2; servers 1 and 2 named with their sessions. */
    private static ShardMap map(long epoch, int primary0) {
        TreeMap<Integer, ShardMap.Registration> named = new TreeMap<>();
        named.put(1, new ShardMap.Registration(SESSION_1, "s1"));
        named.put(2, new ShardMap.Registration(SESSION_2, "s2"));
        int backup0 = primary0 == 1 ? 2 : 1;
        return new ShardMap(epoch, new int[] {primary0, 2}, new int[] {backup0, 1},
                new ShardMap.State[] {ShardMap.State.FULL, ShardMap.State.FULL}, new long[] {1, 1}, new String[] {null, null},
                named);
    }

    @Test
    void theFirstMapSeenCountsAsAPromotion() {
        PrimaryTenure tenure = new PrimaryTenure(1, 2, WAIT);
        tenure.observe(map(1, 1), SESSION_1);
        assertThat(tenure.remainingNanos(0)).as("shard 0, led since the first map seen").isPositive();
    }

    @Test
    void aShardKeptAcrossMapChangesNeedsNoNewWaitAndAShardGainedDoes() {
        AtomicLong clock = new AtomicLong(1_000);
        PrimaryTenure tenure = new PrimaryTenure(2, 2, 100, clock::get);
        tenure.observe(map(1, 1), SESSION_2); // shard 1 gained at 1000
        clock.set(1_060);
        tenure.observe(map(2, 1), SESSION_2); // shard 1 kept: its wait goes on from 1000
        assertThat(tenure.remainingNanos(1)).as("shard 1, kept").isEqualTo(40);
        tenure.observe(map(3, 2), SESSION_2); // shard 0 gained at 1060
        assertThat(tenure.remainingNanos(0)).as("shard 0, just gained").isEqualTo(100);
        assertThat(tenure.remainingNanos(1)).as("shard 1, still kept").isEqualTo(40);
    }

    @Test
    void skippedEpochsCountEveryLedShardAsNewlyGained() {
        AtomicLong clock = new AtomicLong(1_000);
        PrimaryTenure tenure = new PrimaryTenure(2, 2, 100, clock::get);
        tenure.observe(map(1, 2), SESSION_2);
        clock.set(1_060);
        assertThat(tenure.remainingNanos(1)).as("shard 1, led since 1000").isEqualTo(40);
        // epochs 2 and 3 unseen: server 2 may have lost shard 1 and gained it back meanwhile
        tenure.observe(map(4, 2), SESSION_2);
        assertThat(tenure.remainingNanos(1)).as("shard 1 after a gap: waits again from 1060").isEqualTo(100);
    }

    @Test
    void aMapNamingThisIdUnderAnotherSessionGivesItNothing() {
        PrimaryTenure tenure = new PrimaryTenure(1, 2, WAIT);
        tenure.observe(map(1, 1), 99); // an earlier incarnation's map
        assertThat(tenure.remainingNanos(0)).as("never gained: nothing to wait for").isZero();
    }

    @Test
    void anOlderMapIsIgnored() {
        PrimaryTenure tenure = new PrimaryTenure(2, 2, WAIT);
        tenure.observe(map(5, 1), SESSION_2);
        tenure.observe(map(4, 2), SESSION_2); // names server 2 primary of shard 0, but is older
        assertThat(tenure.remainingNanos(0)).as("shard 0, led only in an older map").isZero();
    }
}
