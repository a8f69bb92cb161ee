package io.erda.bench.cluster;

import static org.assertj.core.api.Assertions.assertThat;

import io.erda.bench.ycsb.ErdaYcsbDb;
import io.erda.bench.ycsb.RecordEncoding;
import io.erda.client.ClientOptions;
import io.erda.client.ErdaClient;
import io.erda.cluster.client.ClusterClient;
import io.erda.cluster.client.ShardMap;
import io.erda.cluster.harness.ClusterDemo;
import io.erda.cluster.harness.MemberProcess;
import io.erda.cluster.harness.ZooKeeperMain;
import io.erda.protocol.memory.KeyHash;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import org.apache.curator.test.TestingServer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import site.ycsb.ByteIterator;
import site.ycsb.Status;
import site.ycsb.StringByteIterator;

/** The YCSB binding with {@code erda.uri=zk://...} ([cluster]): records land on their shard's primary and backup. */
class ClusterYcsbBindingTest {

    @Test
    @Timeout(120)
    void theBindingTakesTheClusterUri() throws Exception {
        Path root = ClusterDemo.scratch();
        List<MemberProcess> members = List.of();
        try (TestingServer zookeeper = ZooKeeperMain.start(0)) {
            URI zk = URI.create("zk://127.0.0.1:" + zookeeper.getPort() + "/erda");
            members = ClusterDemo.startMembers(zk, 2, 4, root);
            ErdaYcsbDb db = new ErdaYcsbDb();
            Properties p = new Properties();
            p.setProperty("erda.uri", zk.toString());
            db.setProperties(p);
            db.init();
            try {
                for (int i = 0; i < 20; i++) {
                    assertThat(db.insert("usertable", "user" + i, record())).isEqualTo(Status.OK);
                }
                Map<String, ByteIterator> read = new HashMap<>();
                assertThat(db.read("usertable", "user7", null, read)).isEqualTo(Status.OK);
                assertThat(read.get("field0").toString()).isEqualTo("v".repeat(100));
            } finally {
                db.cleanup();
            }
            byte[] stored = RecordEncoding.encode(record());
            try (ClusterClient cluster = ClusterClient.connect(zk)) {
                byte[] key = "user7".getBytes(StandardCharsets.UTF_8);
                // the map may reach a new client (its map lease reads it) before the servers' registrations do
                ShardMap map = cluster.awaitMap(m -> m.servers().stream().allMatch(id -> cluster.serverUri(id) != null),
                        java.time.Duration.ofSeconds(10));
                int shard = map.shardOf(KeyHash.hash(key));
                for (int server : new int[] {map.primary(shard), map.backup(shard)}) {
                    try (ErdaClient direct = ErdaClient.connect(ClientOptions.of(cluster.serverUri(server)))) {
                        assertThat(direct.get(key)).as("user7 on server %d", server).isEqualTo(stored);
                    }
                }
            }
        } finally {
            members.forEach(MemberProcess::close);
            ClusterDemo.deleteTree(root);
        }
    }

    private static Map<String, ByteIterator> record() {
        return new HashMap<>(Map.of("field0", new StringByteIterator("v".repeat(100))));
    }
}
