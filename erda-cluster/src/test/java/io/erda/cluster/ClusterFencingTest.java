package io.erda.cluster;

import static org.assertj.core.api.Assertions.assertThat;

import io.erda.client.ClientOptions;
import io.erda.cluster.client.ClusterClient;
import io.erda.cluster.client.ShardMap;
import io.erda.cluster.harness.ZkLink;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * Fencing ([cluster]): a GET never returns a value older than a PUT acknowledged before it began, even from a client
 * whose map lags, routed to a primary that was deposed while paused. Three members on the shm fabric, where a
 * one-sided READ is the client's own load from the server's mapped files: it succeeds whatever the server process
 * does, as an RNIC answers READs whatever its host does, so nothing but fencing stands between the reader and the
 * deposed primary's memory.
 */
class ClusterFencingTest {
    private MemberCluster cluster;

    @BeforeEach
    void startCluster() throws Exception {
        cluster = new MemberCluster(3, (id, root) -> List.of("--shards", "4", "--initial-servers", "3",
                "--session-timeout-ms", "2000", "--table-capacity", "4096", "--region-size", "4m",
                "--segment-size", "256k", "--listen", "shm://" + root.resolve("fabric-" + id)));
    }

    @AfterEach
    void stopCluster() throws Exception {
        cluster.close();
    }

    @Test
    void aReaderWhoseMapLagsNeverReadsAPrimaryDeposedWhilePaused() throws Exception {
        byte[] v1 = "v1".getBytes(StandardCharsets.UTF_8);
        byte[] v2 = "v2".getBytes(StandardCharsets.UTF_8);
        try (ClusterClient writer = ClusterClient.connect(cluster.zk);
             ZkLink link = new ZkLink(cluster.zookeeper.getPort());
             ClusterClient reader = ClusterClient.connect(ClientOptions.of(
                     URI.create("zk://127.0.0.1:" + link.port() + "/erda")).withOperationTimeout(Duration.ofSeconds(2)))) {
            ShardMap map = writer.awaitMap(m -> m != null && m.servers().size() == 3
                    && java.util.stream.IntStream.range(0, 4).allMatch(s -> m.state(s) == ShardMap.State.FULL),
                    Duration.ofSeconds(60));
            reader.awaitMap(m -> m.epoch() >= map.epoch(), Duration.ofSeconds(10));
            byte[] key = ClusterProcessTest.keyOfShard(map, 0);
            int primary = map.primary(0);
            writer.put(key, v1);
            assertThat(reader.get(key)).as("the reader, connected to the primary").isEqualTo(v1);

            link.cut(); // the reader hears nothing more from ZooKeeper, and does not know it yet
            cluster.member(primary).pause();
            writer.put(key, v2); // refused until the backup is promoted and has waited out the map leases
            // its backup was promoted (rebalancing may have switched it on since): anyone but the paused primary
            assertThat(writer.shardMap().primary(0)).as("shard 0's primary after the failover").isNotEqualTo(primary);
            assertThat(reader.shardMap().primary(0)).as("the reader's map, which lags").isEqualTo(primary);

            byte[] read;
            try {
                read = reader.get(key);
            } catch (IllegalStateException refused) {
                assertThat(refused).hasMessageContaining("shard 0").hasMessageContaining("could not be confirmed");
                return; // no answer is no stale answer
            }
            assertThat(read).as("GET after a PUT of v2 was acknowledged").isEqualTo(v2);
        }
    }

}
