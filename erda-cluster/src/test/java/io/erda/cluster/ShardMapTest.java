package io.erda.cluster;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.erda.cluster.ShardMap.State;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** The coordinator's rules ([cluster]): promotion, a new backup filled, a lost shard reported, restarts. */
class ShardMapTest {
    private static final Map<Integer, Long> THREE = Map.of(1, 11L, 2, 22L, 3, 33L);

    @Test
    void aDeadPrimarysFullBackupIsPromotedAndEveryShardGetsAFillingBackup() {
        ShardMap first = ShardMap.initial(4, THREE); // primaries 1 2 3 1, backups 2 3 1 2
        ShardMap next = first.reconcile(Map.of(2, 22L, 3, 33L));
        assertThat(next.epoch()).isEqualTo(2);
        assertThat(next.primary(0)).isEqualTo(2);  // promoted
        assertThat(next.backup(0)).isEqualTo(3);
        assertThat(next.state(0)).isEqualTo(State.FILLING);
        assertThat(next.primary(2)).isEqualTo(3);  // its backup (1) died: a new one
        assertThat(next.backup(2)).isEqualTo(2);
        assertThat(next.state(2)).isEqualTo(State.FILLING);
        assertThat(next.state(1)).isEqualTo(State.FULL); // untouched
        assertThat(next.reconcile(Map.of(2, 22L, 3, 33L))).isSameAs(next);
        assertThat(next.withFull(0).state(0)).isEqualTo(State.FULL);
    }

    @Test
    void aPrimaryDyingWhileItsBackupFillsLosesTheShardAndSaysSo() {
        ShardMap filling = ShardMap.initial(2, Map.of(1, 11L, 2, 22L)).reconcile(Map.of(1, 11L, 3, 33L));
        assertThat(filling.backup(0)).isEqualTo(3);
        assertThat(filling.state(0)).isEqualTo(State.FILLING);
        ShardMap lost = filling.reconcile(Map.of(3, 33L));
        assertThat(lost.state(0)).isEqualTo(State.LOST);
        assertThat(lost.primary(0)).as("the lost shard names its dead primary").isEqualTo(1);
    }

    @Test
    void aServerBackUnderANewSessionIsANewServer() {
        ShardMap first = ShardMap.initial(2, Map.of(1, 11L, 2, 22L));
        ShardMap next = first.reconcile(Map.of(1, 11L, 2, 99L)); // server 2 restarted before it was noticed gone
        assertThat(next.names(2, 22L)).isFalse();
        assertThat(next.names(2, 99L)).as("reused as a backup, to be filled").isTrue();
        assertThat(next.primary(1)).isEqualTo(1);
        assertThat(next.state(0)).isEqualTo(State.FILLING);
        assertThat(next.state(1)).isEqualTo(State.FILLING);
    }

    @Test
    void theTextRoundTripsAndBadTextIsRefusedNamingTheLine() {
        ShardMap map = ShardMap.initial(4, THREE).reconcile(Map.of(2, 22L, 3, 33L));
        assertThat(ShardMap.decode(map.encode())).isEqualTo(map);
        assertThatThrownBy(() -> ShardMap.decode("epoch 1\nshards 1\n0 1 2\nsessions\n".getBytes()))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("'0 1 2'");
    }
}
