package io.erda.cluster;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.erda.client.ClientOptions;
import io.erda.client.ErdaClient;
import io.erda.client.ErdaException;
import io.erda.client.KeyValueClient;
import io.erda.core.hash.KeyHash;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import java.util.stream.IntStream;
import org.apache.curator.test.TestingServer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * [cluster] with real processes: a ZooKeeper in this JVM, three {@link ClusterServerMain} processes over tcp, and the
 * {@code zk://} client here.
 */
class ClusterFailoverTest {
    private static final int SHARDS = 4;
    private TestingServer zookeeper;
    private URI zk;
    private final List<MemberProcess> members = new ArrayList<>();

    @BeforeEach
    void startCluster() throws Exception {
        zookeeper = ZooKeeperMain.start(0);
        zk = URI.create("zk://127.0.0.1:" + zookeeper.getPort() + "/erda");
        for (int id = 1; id <= 3; id++) {
            members.add(MemberProcess.start(zk, id, "--shards", String.valueOf(SHARDS), "--initial-servers", "3",
                    "--session-timeout-ms", "3000", "--table-capacity", "64k", "--region-size", "64m"));
        }
    }

    @AfterEach
    void stopCluster() throws Exception {
        members.forEach(MemberProcess::close);
        zookeeper.close();
    }

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
            cluster.delete(key);
            assertThat(cluster.get(key)).isNull();
            try (ErdaClient direct = ErdaClient.connect(ClientOptions.of(backup))) {
                assertThat(direct.get(key)).isNull();
            }
        }
    }

    @Test
    void killingAPrimaryUnderLoadLosesNoAcknowledgedPut() throws Exception {
        int writers = 3;
        int keysPerWriter = 200;
        Map<String, Long> acknowledged = new ConcurrentHashMap<>();
        AtomicBoolean stop = new AtomicBoolean();
        AtomicLong killedAt = new AtomicLong(Long.MAX_VALUE);
        AtomicLong firstAfterKill = new AtomicLong(Long.MAX_VALUE);
        AtomicReference<Set<Integer>> killedShards = new AtomicReference<>(Set.of());
        AtomicReference<Throwable> failure = new AtomicReference<>();
        try (ClusterClient client = ClusterClient.connect(ClientOptions.of(zk).withPoolSize(writers))) {
            ShardMap before = client.shardMap();
            List<Thread> threads = new ArrayList<>();
            for (int w = 0; w < writers; w++) {
                int writer = w;
                threads.add(Thread.ofPlatform().start(() -> {
                    try {
                        for (long seq = 1; !stop.get(); seq++) {
                            for (int k = 0; k < keysPerWriter && !stop.get(); k++) {
                                String key = "w" + writer + "-k" + k;
                                client.put(bytes(key), bytes(key + "=" + seq));
                                long now = System.nanoTime();
                                acknowledged.put(key, seq);
                                if (now > killedAt.get() && killedShards.get().contains(before.shardOf(KeyHash.hash(bytes(key))))) {
                                    firstAfterKill.accumulateAndGet(now, Math::min);
                                }
                            }
                        }
                    } catch (Throwable t) {
                        failure.compareAndSet(null, t);
                    }
                }));
            }
            long warm = System.nanoTime() + 60_000_000_000L;
            while (acknowledged.size() < writers * keysPerWriter && System.nanoTime() < warm && failure.get() == null) {
                Thread.sleep(10); // every key acknowledged once before the kill
            }
            Thread.sleep(200);
            int victim = before.primary(0);
            killedShards.set(Set.copyOf(IntStream.range(0, SHARDS).filter(s -> before.primary(s) == victim).boxed().toList()));
            members.stream().filter(m -> m.id() == victim).findFirst().orElseThrow().kill(); // returns once gone
            killedAt.set(System.nanoTime());

            // a client started during the failover finds the new map and serves the killed primary's shard
            byte[] late = keyOfShard(before, 0);
            AtomicReference<Throwable> newcomerFailure = new AtomicReference<>();
            Thread newcomerThread = Thread.ofPlatform().start(() -> {
                try (ClusterClient newcomer = ClusterClient.connect(ClientOptions.of(zk))) {
                    newcomer.put(late, bytes("late"));
                    assertThat(newcomer.get(late)).asString(StandardCharsets.UTF_8).isEqualTo("late");
                    assertThat(newcomer.shardMap().primary(0)).isNotEqualTo(victim);
                } catch (Throwable t) {
                    newcomerFailure.set(t);
                }
            });
            // stop soon after the first PUT on a killed shard succeeds: later PUTs would overwrite, and so hide, a
            // lost one (every key was acknowledged before the kill, most of them not since)
            long deadline = System.nanoTime() + 30_000_000_000L;
            while (firstAfterKill.get() == Long.MAX_VALUE && System.nanoTime() < deadline) {
                Thread.sleep(5);
            }
            Thread.sleep(50);
            stop.set(true);
            for (Thread t : threads) {
                t.join();
            }
            newcomerThread.join();
            assertThat(newcomerFailure.get()).as("client started during the failover").isNull();
            assertThat(failure.get()).as("writer failure").isNull();

            ShardMap after = client.shardMap();
            assertThat(after.epoch()).isGreaterThan(before.epoch());
            assertThat(after.servers()).doesNotContain(victim);
            for (int s : killedShards.get()) {
                assertThat(after.primary(s)).as("shard " + s + " promoted its backup").isEqualTo(before.backup(s));
            }
            long lost = 0;
            long onKilledShards = 0;
            for (Map.Entry<String, Long> e : acknowledged.entrySet()) {
                if (killedShards.get().contains(before.shardOf(KeyHash.hash(bytes(e.getKey()))))) {
                    onKilledShards++;
                }
                byte[] value = client.get(bytes(e.getKey()));
                long read = value == null ? 0 : Long.parseLong(new String(value, StandardCharsets.UTF_8).split("=")[1]);
                if (read < e.getValue()) {
                    lost++;
                }
            }
            assertThat(acknowledged).hasSize(writers * keysPerWriter);
            assertThat(onKilledShards).as("keys on the killed primary's shards").isPositive();
            assertThat(lost).as("acknowledged PUTs lost").isZero();
            assertThat(firstAfterKill.get()).as("a PUT of the killed primary's shards succeeded after the kill")
                    .isLessThan(Long.MAX_VALUE);
            System.out.printf("cluster failover: shards %d, acknowledged keys %d, lost %d, failover ms %d, retries %d%n",
                    SHARDS, acknowledged.size(), lost, (firstAfterKill.get() - killedAt.get()) / 1_000_000,
                    client.retries());
        }
    }

    private URI serverUri(int id) {
        try (var curator = Zk.connect(zk, 5000)) {
            return URI.create(new String(curator.getData().forPath(Zk.server(id)), StandardCharsets.UTF_8));
        } catch (Exception e) {
            throw new IllegalStateException(e);
        }
    }

    private static byte[] keyOfShard(ShardMap map, int shard) {
        for (int i = 0; ; i++) {
            byte[] key = bytes("probe-" + i);
            if (map.shardOf(KeyHash.hash(key)) == shard) {
                return key;
            }
        }
    }

    private static byte[] bytes(String s) {
        return s.getBytes(StandardCharsets.UTF_8);
    }
}
