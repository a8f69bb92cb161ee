package io.erda.cluster;

import io.erda.cluster.client.ShardMap;
import io.erda.cluster.client.Zk;
import io.erda.cluster.harness.ClusterDemo;
import io.erda.cluster.harness.MemberProcess;
import io.erda.cluster.harness.VerifyingLoad;
import io.erda.cluster.harness.ZooKeeperMain;
import io.erda.protocol.memory.KeyHash;
import java.net.URI;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.apache.curator.test.TestingServer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;

/**
 * A cluster of real processes for each test ([cluster]): a ZooKeeper in this JVM, {@value #SERVERS}
 * {@link ClusterServerMain} processes over tcp with {@value #SHARDS} shards, their stores under a scratch directory
 * ({@code root/member-ID}, so a member restarted with its id finds its files).
 */
abstract class ClusterProcessTest {
    static final int SERVERS = 3;
    static final int SHARDS = 4;
    TestingServer zookeeper;
    URI zk;
    final List<MemberProcess> members = new ArrayList<>();
    Path root;

    @BeforeEach
    void startCluster() throws Exception {
        zookeeper = ZooKeeperMain.start(0);
        zk = URI.create("zk://127.0.0.1:" + zookeeper.getPort() + "/erda");
        root = ClusterDemo.scratch();
        members.addAll(ClusterDemo.startMembers(zk, SERVERS, SHARDS, root));
    }

    @AfterEach
    void stopCluster() throws Exception {
        members.forEach(MemberProcess::close);
        zookeeper.close();
        ClusterDemo.deleteTree(root);
    }

    MemberProcess member(int id) {
        return members.stream().filter(m -> m.id() == id).findFirst().orElseThrow();
    }

    /** The fabric URI live server {@code id} registered. */
    URI serverUri(int id) {
        try (var curator = Zk.connect(zk, 5000)) {
            return Zk.uri(curator.getData().forPath(Zk.server(id)));
        } catch (Exception e) {
            throw new IllegalStateException(e);
        }
    }

    static byte[] keyOfShard(ShardMap map, int shard) {
        for (int i = 0; ; i++) {
            byte[] key = bytes("probe-" + i);
            if (map.shardOf(KeyHash.hash(key)) == shard) {
                return key;
            }
        }
    }

    static byte[] bytes(String s) {
        return VerifyingLoad.bytes(s);
    }
}
