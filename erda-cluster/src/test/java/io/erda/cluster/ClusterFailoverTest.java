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
import java.util.concurrent.atomic.AtomicReference;
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
        members.addAll(ClusterDemo.startMembers(zk, 3, SHARDS));
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
            assertThat(o.after().primary(s)).as("shard " + s + " promoted its backup").isEqualTo(o.before().backup(s));
        }
        assertThat(newcomerMap.get().primary(0)).isNotEqualTo(o.victim());
        assertThat(o.acknowledged()).hasSize(3 * 200);
        assertThat(o.keysOnKilledShards()).as("keys on the killed primary's shards").isPositive();
        assertThat(o.lost()).as("acknowledged PUTs lost").isZero();
        System.out.printf("cluster failover: shards %d, acknowledged keys %d, lost %d, failover ms %d, retries %d%n",
                SHARDS, o.acknowledged().size(), o.lost(), o.failoverMillis(), o.retries());
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
        return ClusterDemo.bytes(s);
    }
}
