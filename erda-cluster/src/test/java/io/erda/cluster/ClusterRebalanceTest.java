package io.erda.cluster;

import static org.assertj.core.api.Assertions.assertThat;

import io.erda.client.ClientOptions;
import io.erda.cluster.client.ClusterClient;
import io.erda.cluster.client.ShardMap;
import io.erda.cluster.harness.ClusterDemo;
import io.erda.cluster.harness.VerifyingLoad;
import java.time.Duration;
import org.junit.jupiter.api.Test;

/**
 * Rebalancing ([cluster]) with real processes: a server killed -9 and restarted on its files under a verifying load
 * gets its share of primaries and backups back (moves: a backup filled, then roles switched), and no acknowledged PUT
 * is lost while the moves run.
 */
class ClusterRebalanceTest extends ClusterProcessTest {
    @Test
    void aServerThatReturnsGetsItsShareBackAndNoAcknowledgedPutIsLostDuringTheMoves() throws Exception {
        try (ClusterClient client = ClusterClient.connect(ClientOptions.of(zk).withPoolSize(4))) {
            ShardMap first = client.shardMap();
            VerifyingLoad load = new VerifyingLoad(client, SHARDS, 3, 100);
            try (load) {
                load.awaitEveryKey();
                int returning = first.primary(0);
                member(returning).kill();
                client.awaitMap(m -> !m.servers().contains(returning) && !m.filling(), Duration.ofSeconds(60));
                members.set(members.indexOf(member(returning)), ClusterDemo.startMember(zk, returning, SERVERS, SHARDS, root));
                long back = System.nanoTime();
                ShardMap balanced = client.awaitMap(m -> m.balanced() && m.servers().size() == SERVERS
                        && m.primaryCounts().getOrDefault(returning, 0) >= 1, Duration.ofSeconds(90));
                long rebalanceMillis = (System.nanoTime() - back) / 1_000_000;
                Thread.sleep(500); // PUTs go on under the final map too
                load.stop();
                assertThat(load.lost(client)).as("acknowledged PUTs lost").isZero();
                System.out.printf("rebalanced: server %d back, primaries %s, roles %s, %d ms from its restart, "
                        + "acknowledged PUTs %d, lost 0, map %s%n", returning, balanced.primaryCounts(), balanced.roleCounts(),
                        rebalanceMillis, load.acknowledgedPuts(), balanced);
            }
        }
    }


}
