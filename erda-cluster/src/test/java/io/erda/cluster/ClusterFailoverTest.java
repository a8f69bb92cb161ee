package io.erda.cluster;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.erda.client.ClientOptions;
import io.erda.client.ErdaClient;
import io.erda.client.ErdaException;
import io.erda.client.KeyValueClient;
import io.erda.cluster.client.ClusterClient;
import io.erda.cluster.client.ShardMap;
import io.erda.cluster.harness.ClusterDemo;
import io.erda.cluster.harness.VerifyingLoad;
import io.erda.protocol.memory.KeyHash;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Set;
import java.util.concurrent.atomic.AtomicReference;
import java.util.stream.IntStream;
import org.junit.jupiter.api.Test;

/**
 * [cluster] with real processes: a ZooKeeper in this JVM, three {@link ClusterServerMain} processes over tcp, and the
 * {@code zk://} client here.
 */
class ClusterFailoverTest extends ClusterProcessTest {
    private static final java.time.Duration MAP_WAIT = java.time.Duration.ofSeconds(60);

    @Test
    void aPutIsOnTheBackupTooAndAPlainClientOfAPrimaryIsRefused() {
        try (KeyValueClient cluster = KeyValueClient.connect(ClientOptions.of(zk))) {
            assertThat(cluster).isInstanceOf(ClusterClient.class);
            ShardMap map = ((ClusterClient) cluster).shardMap();
            assertThat(map.shards()).isEqualTo(SHARDS);
            for (int s = 0; s < SHARDS; s++) {
                assertThat(map.backup(s)).isNotEqualTo(map.primary(s)).isNotEqualTo(ShardMap.NONE);
            }
            byte[] key = "replicated".getBytes(StandardCharsets.UTF_8);
            cluster.put(key, "v1".getBytes(StandardCharsets.UTF_8));
            assertThat(cluster.get(key)).asString(StandardCharsets.UTF_8).isEqualTo("v1");

            int shard = map.shardOf(KeyHash.hash(key));
            URI backup = serverUri(map.backup(shard));
            URI primary = serverUri(map.primary(shard));
            // one-sided READs of the backup's own table and log: the client WROTE the object there
            try (ErdaClient direct = ErdaClient.connect(ClientOptions.of(backup))) {
                assertThat(direct.get(key)).asString(StandardCharsets.UTF_8).isEqualTo("v1");
            }
            try (ErdaClient plain = ErdaClient.connect(ClientOptions.of(primary))) {
                assertThatThrownBy(() -> plain.put(key, "v2".getBytes(StandardCharsets.UTF_8)))
                        .isInstanceOf(ErdaException.class).hasMessageContaining("zk://");
            }
            // a PUT whose backup WRITE did not happen (here: refused) leaves nothing on the primary either, where GETs
            // would see it before a promotion of the backup took it back
            assertThat(cluster.get(key)).as("after a PUT refused at its backup WRITE").asString(StandardCharsets.UTF_8)
                    .isEqualTo("v1");
            cluster.delete(key);
            assertThat(cluster.get(key)).isNull();
            try (ErdaClient direct = ErdaClient.connect(ClientOptions.of(backup))) {
                assertThat(direct.get(key)).isNull();
            }
        }
    }

    @Test
    void killingAPrimaryUnderLoadLosesNoAcknowledgedPut() throws Exception {
        AtomicReference<ShardMap> newcomerMap = new AtomicReference<>();
        ClusterDemo.Outcome o = ClusterDemo.killPrimaryUnderLoad(zk, members, 3, 200, victim -> {
            // a client started during the failover finds the new map and serves the killed primary's shard
            try (ClusterClient newcomer = ClusterClient.connect(ClientOptions.of(zk))) {
                byte[] late = keyOfShard(newcomer.shardMap(), 0);
                newcomer.put(late, bytes("late"));
                assertThat(newcomer.get(late)).asString(StandardCharsets.UTF_8).isEqualTo("late");
                newcomerMap.set(newcomer.shardMap());
            }
        });
        assertThat(o.after().epoch()).isGreaterThan(o.before().epoch());
        assertThat(o.after().servers()).doesNotContain(o.victim());
        for (int s : o.killedShards()) {
            // promoted to its backup (ShardMapTest); by the end rebalancing may have switched it on to another full copy
            assertThat(o.after().primary(s)).as("shard " + s + "'s primary at the end").isNotEqualTo(o.victim());
        }
        assertThat(newcomerMap.get().primary(0)).isNotEqualTo(o.victim());
        assertThat(o.acknowledged()).hasSize(3 * 200);
        assertThat(o.keysOnKilledShards()).as("keys on the killed primary's shards").isPositive();
        assertThat(o.lost()).as("acknowledged PUTs lost").isZero();
        // the victim's end was seen at once (DeathWatch), not only when its lease ran out
        String ended = "server " + o.victim() + " (session ";
        assertThat(members.stream().filter(m -> m.id() != o.victim()).anyMatch(m -> logContains(m.log(), ended)))
                .as("a surviving member logged '%s... ended: its liveness connection closed'", ended).isTrue();
        System.out.printf("cluster failover: shards %d, acknowledged keys %d, lost %d, failover ms %d, retries %d%n",
                SHARDS, o.acknowledged().size(), o.lost(), o.failoverMillis(), o.retries());
    }

    /**
     * "A backup that dies is replaced": kill -9 shard 0's backup under load, restart it at once on its old files (a
     * returning server); every shard gets a full backup again (filled while the load runs) and the returning server
     * serves; then kill -9 the primary of a shard it does not lead (one it backs up where there is one): the shard's
     * filled backup takes over and no acknowledged PUT is lost. Keys deleted while the returning server was down stay
     * deleted on every copy, and every backup holds what its primary holds.
     */
    @Test
    void aBackupThatDiesIsReplacedByAFilledOneAndNoAcknowledgedPutIsLost() throws Exception {
        try (ClusterClient client = ClusterClient.connect(ClientOptions.of(zk).withPoolSize(4))) {
            ShardMap first = client.shardMap();
            List<byte[]> doomed = new ArrayList<>();
            for (int i = 0; i < 32; i++) {
                doomed.add(bytes("doomed-" + i));
                client.put(doomed.get(i), bytes("doomed-" + i + "=1"));
            }
            VerifyingLoad load = new VerifyingLoad(client, SHARDS, 3, 150);
            try (load) {
                load.awaitEveryKey();
                int returning = first.backup(0);
                member(returning).kill();
                for (byte[] key : doomed) {
                    client.delete(key); // retried until the map no longer needs the dead server
                }
                members.set(members.indexOf(member(returning)), ClusterDemo.startMember(zk, returning, 3, SHARDS, root));
                // the returning server back in the map (under its new session) and every shard with a full backup
                ShardMap refilled = client.awaitMap(m -> !m.names(returning, first.session(returning))
                        && m.servers().contains(returning) && !m.filling()
                        && IntStream.range(0, SHARDS).allMatch(s -> m.backup(s) != ShardMap.NONE), MAP_WAIT);
                // the shard whose primary dies next: not one the returning server leads (killing it would show
                // nothing of its return, and it may lead a shard after rebalancing), one it backs up where it can
                int shard = IntStream.range(0, SHARDS).filter(s -> refilled.primary(s) != returning).boxed()
                        .min(Comparator.comparingInt(s -> refilled.backup(s) == returning ? 0 : 1))
                        .orElseThrow(() -> new AssertionError("the returning server leads every shard: " + refilled));
                assertThat(refilled.backup(shard)).as("shard %d's new backup", shard)
                        .isNotEqualTo(refilled.primary(shard));

                int victim = refilled.primary(shard);
                Set<Integer> killedShards = Set.copyOf(IntStream.range(0, SHARDS)
                        .filter(s -> refilled.primary(s) == victim).boxed().toList());
                member(victim).kill();
                load.watch(killedShards, System.nanoTime());
                long failoverMillis = load.awaitWatched();
                load.stop(); // later PUTs would overwrite, and so hide, a lost one
                assertThat(client.shardMap().primary(shard))
                        .as("shard %d served by another than its killed primary", shard).isNotEqualTo(victim);
                assertThat(load.lost(client)).as("acknowledged PUTs lost").isZero();

                ShardMap last = client.awaitMap(m -> !m.filling() && !m.servers().contains(victim)
                        && IntStream.range(0, SHARDS).allMatch(s -> m.backup(s) != ShardMap.NONE), MAP_WAIT);
                assertThat(last.servers()).as("the returning server serves again").contains(returning);
                for (int s = 0; s < SHARDS; s++) {
                    try (ErdaClient backup = ErdaClient.connect(ClientOptions.of(serverUri(last.backup(s))))) {
                        for (byte[] key : doomed) {
                            if (last.shardOf(KeyHash.hash(key)) == s) {
                                assertThat(backup.get(key)).as("deleted key on backup %d of shard %d", last.backup(s), s)
                                        .isNull();
                            }
                        }
                        for (String key : load.acknowledged().keySet()) {
                            if (last.shardOf(KeyHash.hash(bytes(key))) == s) {
                                assertThat(VerifyingLoad.sequence(backup.get(bytes(key))))
                                        .as("%s on backup %d of shard %d", key, last.backup(s), s)
                                        .isEqualTo(VerifyingLoad.sequence(client.get(bytes(key))));
                            }
                        }
                    }
                }
                System.out.printf("backup replaced: acknowledged PUTs %d, lost 0, second failover ms %d, maps %s -> %s%n",
                        load.acknowledgedPuts(), failoverMillis, refilled, last);
            }
        }
    }

    private static boolean logContains(java.nio.file.Path log, String text) {
        try {
            return java.nio.file.Files.readAllLines(log).stream()
                    .anyMatch(l -> l.contains(text) && l.contains("ended: its liveness connection closed"));
        } catch (java.io.IOException e) {
            throw new java.io.UncheckedIOException(e);
        }
    }
}
