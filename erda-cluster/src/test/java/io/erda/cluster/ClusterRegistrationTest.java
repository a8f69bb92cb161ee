package io.erda.cluster;

import static org.assertj.core.api.Assertions.assertThat;

import io.erda.cluster.client.ShardMap;
import io.erda.cluster.client.Zk;
import io.erda.cluster.harness.ZooKeeperMain;
import io.erda.server.ServerConfig;
import java.net.URI;
import java.nio.file.Path;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.api.CuratorWatcher;
import org.apache.curator.test.TestingServer;
import org.apache.zookeeper.Watcher;
import org.apache.zookeeper.data.Stat;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * A member's registration against a real ZooKeeper, the member in this JVM (its session is read at the instant its
 * registration appears; its member lease is long, so a slow test host never makes it halt the JVM). The coordinator
 * may name a new registration in a map within a round trip of its create, and the member follows a map only where it
 * names it with its own session: the session must be known before the registration is visible. When it was learned
 * only after the create, a member restarted as the last primary of lost shards dropped the map that re-adopted them,
 * and their new backups were never filled unless a PUT came (a nemesis run in CI waited 120 s on four shards
 * {@code FILLING}).
 */
class ClusterRegistrationTest {
    @Test
    @Timeout(60)
    void theMemberKnowsItsSessionBeforeItsRegistrationIsVisible(@TempDir Path dir) throws Exception {
        try (TestingServer zookeeper = ZooKeeperMain.start(0)) {
            URI zk = URI.create("zk://127.0.0.1:" + zookeeper.getPort() + "/erda");
            ServerConfig config = ServerConfig.defaults(dir.resolve("store"), URI.create("tcp://127.0.0.1:0"))
                    .withGeometry(1, 1024, 4L << 20, 1L << 20);
            ClusterServer member = new ClusterServer(zk, 1, 4, 1, 10_000, Duration.ofSeconds(10), null, config);
            try (CuratorFramework observer = Zk.connect(zk, 10_000)) {
                CompletableFuture<long[]> atCreation = new CompletableFuture<>();
                observer.checkExists().usingWatcher((CuratorWatcher) event -> {
                    if (event.getType() == Watcher.Event.EventType.NodeCreated) {
                        long known = member.session(); // first, before anything else takes time
                        Stat stat = observer.checkExists().forPath(Zk.server(1));
                        atCreation.complete(new long[] {known, stat == null ? -1 : stat.getEphemeralOwner()});
                    }
                }).forPath(Zk.server(1));
                member.start();
                long[] seen = atCreation.get(30, TimeUnit.SECONDS);
                assertThat(seen[1]).as("the registration's owner").isNotIn(0L, -1L);
                assertThat(seen[0]).as("the member's session the instant its registration appeared").isEqualTo(seen[1]);
                assertThat(member.session()).isEqualTo(seen[1]);

                long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
                ShardMap map = null;
                while (System.nanoTime() < deadline) {
                    byte[] data = observer.checkExists().forPath(Zk.MAP) == null ? null
                            : observer.getData().forPath(Zk.MAP);
                    map = data == null ? null : ShardMap.decode(data);
                    if (map != null) {
                        break;
                    }
                    Thread.sleep(20);
                }
                assertThat(map).as("the first map").isNotNull();
                assertThat(map.names(1, seen[1])).as("the map names the member by that session: " + map).isTrue();
            } finally {
                member.close();
            }
        }
    }
}
