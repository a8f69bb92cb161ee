package io.erda.cluster.client;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.erda.cluster.client.ShardMap.Registration;
import io.erda.cluster.client.ShardMap.State;
import java.util.Map;
import java.util.TreeMap;
import org.junit.jupiter.api.Test;

/** The coordinator's rules ([cluster]): promotion, a new backup filled, a lost shard reported and recovered, restarts. */
class ShardMapTest {
    private static final Map<Integer, Registration> THREE = live(1, 11, 2, 22, 3, 33);

    /** id, session pairs; each server's store is "store-ID". */
    private static Map<Integer, Registration> live(long... idSession) {
        Map<Integer, Registration> live = new TreeMap<>();
        for (int i = 0; i < idSession.length; i += 2) {
            live.put((int) idSession[i], new Registration(idSession[i + 1], "store-" + idSession[i]));
        }
        return live;
    }

    private static Map<Integer, Registration> with(Map<Integer, Registration> live, int id, long session, String store) {
        Map<Integer, Registration> changed = new TreeMap<>(live);
        changed.put(id, new Registration(session, store));
        return changed;
    }

    @Test
    void aDeadPrimarysFullBackupIsPromotedAndEveryShardGetsAFillingBackup() {
        ShardMap first = ShardMap.initial(4, THREE); // primaries 1 2 3 1, backups 2 3 1 2
        ShardMap next = first.reconcile(live(2, 22, 3, 33));
        assertThat(next.epoch()).isEqualTo(2);
        assertThat(next.primary(0)).isEqualTo(2);  // promoted
        assertThat(next.backup(0)).isEqualTo(3);
        assertThat(next.state(0)).isEqualTo(State.FILLING);
        assertThat(next.primary(2)).isEqualTo(3);  // its backup (1) died: a new one
        assertThat(next.backup(2)).isEqualTo(2);
        assertThat(next.state(2)).isEqualTo(State.FILLING);
        assertThat(next.state(1)).isEqualTo(State.FULL); // untouched
        assertThat(next.reconcile(live(2, 22, 3, 33))).isSameAs(next);
        assertThat(next.withFull(0).state(0)).isEqualTo(State.FULL);
    }

    @Test
    void aPrimaryDyingWhileItsBackupFillsLosesTheShardAndSaysSo() {
        ShardMap filling = ShardMap.initial(2, live(1, 11, 2, 22)).reconcile(live(1, 11, 3, 33));
        assertThat(filling.backup(0)).isEqualTo(3);
        assertThat(filling.state(0)).isEqualTo(State.FILLING);
        ShardMap lost = filling.reconcile(live(3, 33));
        assertThat(lost.state(0)).isEqualTo(State.LOST);
        assertThat(lost.primary(0)).as("the lost shard names its dead primary").isEqualTo(1);
        assertThat(lost.lostStore(0)).as("and the store that held it").isEqualTo("store-1");
        assertThat(lost.reconcile(live(3, 33))).isSameAs(lost);
    }

    @Test
    void aServerBackUnderANewSessionIsANewServer() {
        ShardMap first = ShardMap.initial(2, live(1, 11, 2, 22));
        ShardMap next = first.reconcile(live(1, 11, 2, 99)); // server 2 restarted before it was noticed gone
        assertThat(next.names(2, 22L)).isFalse();
        assertThat(next.names(2, 99L)).as("reused as a backup, to be filled").isTrue();
        assertThat(next.primary(1)).isEqualTo(1);
        assertThat(next.state(0)).isEqualTo(State.FILLING);
        assertThat(next.state(1)).isEqualTo(State.FILLING);
    }

    @Test
    void aLostShardsLastPrimaryBackOnItsStoreIsItsPrimaryAgainThenGetsAFilledBackup() {
        ShardMap lost = ShardMap.initial(2, live(1, 11, 2, 22)).reconcile(live(1, 11, 3, 33)).reconcile(live(3, 33));
        assertThat(lost.state(0)).isEqualTo(State.LOST);
        ShardMap back = lost.reconcile(live(1, 77, 3, 33)); // server 1 restarted on its files
        assertThat(back.primary(0)).isEqualTo(1);
        assertThat(back.names(1, 77)).isTrue();
        assertThat(back.lostStore(0)).isNull();
        assertThat(back.state(0)).as("re-adopted, then given a backup to fill").isEqualTo(State.FILLING);
        assertThat(back.backup(0)).isEqualTo(3);
        assertThat(back.refusal(0, live(1, 77, 3, 33))).isNull();
        assertThat(ShardMap.decode(back.encode())).isEqualTo(back);
    }

    @Test
    void aWholeClusterBackOnItsStoresHasEveryShardBack() {
        ShardMap first = ShardMap.initial(4, THREE);
        ShardMap back = first.reconcile(live(1, 44, 2, 55, 3, 66)); // every server restarted, none noticed gone
        for (int s = 0; s < 4; s++) {
            assertThat(back.state(s)).as("shard %d", s).isEqualTo(State.FILLING);
            assertThat(back.primary(s)).as("shard %d keeps its primary", s).isEqualTo(first.primary(s));
            assertThat(back.backup(s)).isNotEqualTo(back.primary(s)).isNotEqualTo(ShardMap.NONE);
        }
        assertThat(back.names(1, 44) && back.names(2, 55) && back.names(3, 66)).isTrue();
    }

    @Test
    void aLostShardsLastPrimaryBackOnAnotherStoreIsNotReadoptedEvenOnceItServesOtherShards() {
        ShardMap lost = ShardMap.initial(4, THREE).reconcile(live(3, 33)); // 1 and 2 die at once
        assertThat(lost.state(0)).isEqualTo(State.LOST); // primary 1, backup 2
        assertThat(lost.state(3)).isEqualTo(State.LOST);
        assertThat(lost.primary(1)).isEqualTo(3);
        Map<Integer, Registration> wiped = with(live(3, 33), 1, 77, "store-1-wiped");
        ShardMap next = lost.reconcile(wiped);
        assertThat(next.state(0)).isEqualTo(State.LOST);
        assertThat(next.state(3)).isEqualTo(State.LOST);
        assertThat(next.refusal(0, wiped)).contains("shard 0", "server 1", "store-1-wiped", "store store-1 ");
        assertThat(next.backup(1)).as("the wiped server serves as a new one").isEqualTo(1);
        assertThat(next.store(1)).isEqualTo("store-1-wiped");
        ShardMap later = next.withFull(1).reconcile(wiped);
        assertThat(later.state(0)).as("the store the shard was lost on is still the one asked for").isEqualTo(State.LOST);
        assertThat(later.lostStore(0)).isEqualTo("store-1");
        ShardMap restored = later.reconcile(with(live(3, 33), 1, 78, "store-1")); // its old directory put back
        assertThat(restored.state(0)).isNotEqualTo(State.LOST);
        assertThat(restored.primary(0)).isEqualTo(1);
    }

    @Test
    void aServerIsNotReadoptedForAShardPromotedElsewhereThatWasLostLater() {
        ShardMap first = ShardMap.initial(2, live(1, 11, 2, 22)); // shard 0: 1 then 2; shard 1: 2 then 1
        ShardMap promoted = first.reconcile(live(2, 22)); // 1 dies: 2 primary of both, no backup
        assertThat(promoted.primary(0)).isEqualTo(2);
        ShardMap lost = promoted.reconcile(live(3, 33)); // 2 dies too
        assertThat(lost.state(0)).isEqualTo(State.LOST);
        ShardMap back = lost.reconcile(live(1, 77, 3, 33)); // 1 returns on its files: it is not what the shards lost
        assertThat(back.state(0)).isEqualTo(State.LOST);
        assertThat(back.state(1)).isEqualTo(State.LOST);
        assertThat(back.refusal(0, live(1, 77, 3, 33))).isNull();
        ShardMap twoBack = back.reconcile(live(1, 77, 2, 88, 3, 33));
        assertThat(twoBack.primary(0)).isEqualTo(2);
        assertThat(twoBack.state(0)).isNotEqualTo(State.LOST);
    }

    /** Reconciles with {@code live}, marking every fill full, until the map stands still; returns the last map. */
    private static ShardMap settle(ShardMap map, Map<Integer, Registration> live, java.util.List<ShardMap> steps) {
        for (int round = 0; round < 100; round++) {
            ShardMap next = map.reconcile(live);
            for (int s = 0; s < next.shards(); s++) {
                if (next.state(s) == State.FILLING) {
                    next = next.withFull(s); // the primary's fill
                }
            }
            if (next.equals(map)) {
                return map;
            }
            steps.add(next);
            map = next;
        }
        throw new AssertionError("no fixed point in 100 rounds: " + map);
    }

    @Test
    void aServerThatReturnsGetsItsShareOfPrimariesAndBackupsOneMoveAtATime() {
        ShardMap first = ShardMap.initial(8, THREE);
        java.util.List<ShardMap> steps = new java.util.ArrayList<>();
        ShardMap twoLeft = settle(first.reconcile(live(2, 22, 3, 33)), live(2, 22, 3, 33), steps);
        assertThat(twoLeft.primaryCounts()).doesNotContainKey(1);
        steps.clear();
        Map<Integer, Registration> back = live(1, 44, 2, 22, 3, 33); // server 1 restarted: a new session
        ShardMap balanced = settle(twoLeft, back, steps);
        assertThat(balanced.primaryCounts().values()).as("primaries per server " + balanced.primaryCounts()).allMatch(n -> n == 2 || n == 3);
        assertThat(balanced.primaryCounts()).containsKey(1);
        assertThat(balanced.roleCounts().values()).as("roles per server " + balanced.roleCounts()).allMatch(n -> n == 5 || n == 6);
        assertThat(balanced.balanced()).isTrue();
        assertThat(twoLeft.reconcile(back).balanced()).as("server 1 back, nothing moved yet").isFalse();
        ShardMap before = twoLeft;
        for (ShardMap step : steps) {
            int changedShards = 0;
            for (int s = 0; s < step.shards(); s++) {
                assertThat(step.backup(s)).as("shard " + s + "'s copies on two servers").isNotEqualTo(step.primary(s));
                assertThat(step.state(s)).isNotEqualTo(State.LOST);
                boolean moved = step.primary(s) != before.primary(s) || step.backup(s) != before.backup(s);
                if (moved) {
                    changedShards++;
                    // a switch keeps both copies; a move keeps the primary and fills a new backup
                    boolean switched = step.primary(s) == before.backup(s) && step.backup(s) == before.primary(s);
                    assertThat(switched || step.primary(s) == before.primary(s)).as("shard " + s + " in " + step).isTrue();
                    assertThat(step.backupSince(s)).as("a new assignment's epoch").isGreaterThan(before.backupSince(s));
                }
            }
            assertThat(changedShards).as("one move per map: " + step).isLessThanOrEqualTo(1);
            before = step;
        }
    }

    @Test
    void aBackupMovedAwayAndGivenTheShardAgainHasANewAssignment() {
        ShardMap first = ShardMap.initial(2, live(1, 11, 2, 22)); // 0: 1 -> 2, 1: 2 -> 1
        long firstSince = first.backupSince(0);
        // server 3 joins: it gets a backup role by a move, once nothing fills
        ShardMap moved = first.reconcile(live(1, 11, 2, 22, 3, 33));
        int shard = moved.backup(0) == 3 ? 0 : 1;
        assertThat(moved.backup(shard)).isEqualTo(3);
        assertThat(moved.state(shard)).isEqualTo(State.FILLING);
        // server 3 leaves: the shard gets a backup again, possibly its old one, under a new assignment
        ShardMap again = moved.withFull(shard).reconcile(live(1, 11, 2, 22));
        assertThat(again.backup(shard)).isNotEqualTo(3);
        assertThat(again.state(shard)).isEqualTo(State.FILLING);
        assertThat(again.backupSince(shard)).isGreaterThan(moved.backupSince(shard)).isGreaterThan(firstSince);
    }

    @Test
    void aMapWrittenBeforeAssignmentsWereRecordedReadsWithAssignmentZero() {
        String old = "epoch 3\nshards 2\n0 1 2 full\n1 2 1 lost store-2\nnamed 1:11:store-1 2:22:store-2\n";
        ShardMap map = ShardMap.decode(old.getBytes(java.nio.charset.StandardCharsets.UTF_8));
        assertThat(map.backupSince(0)).isZero();
        assertThat(map.lostStore(1)).isEqualTo("store-2");
        assertThat(ShardMap.decode(map.encode())).isEqualTo(map);
    }

    @Test
    void theTextRoundTripsAndBadTextIsRefusedNamingTheLine() {
        ShardMap map = ShardMap.initial(4, THREE).reconcile(live(2, 22, 3, 33));
        assertThat(ShardMap.decode(map.encode())).isEqualTo(map);
        ShardMap lost = ShardMap.initial(2, live(1, 11)).reconcile(live(2, 22));
        assertThat(new String(lost.encode())).contains("0 1 -1 lost 1 store-1\n"); // shard primary backup state since store
        assertThat(ShardMap.decode(lost.encode())).isEqualTo(lost);
        assertThatThrownBy(() -> ShardMap.decode("epoch 1\nshards 1\n0 1 2\nnamed\n".getBytes()))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("'0 1 2'");
        assertThatThrownBy(() -> ShardMap.decode("epoch 1\nshards 1\n0 1 2 full\nnamed 1:5\n".getBytes()))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("'1:5'");
    }
}
