package io.erda.cluster;

import static org.assertj.core.api.Assertions.assertThat;

import io.erda.client.ClientOptions;
import io.erda.client.ErdaClient;
import io.erda.cluster.client.ClusterClient;
import io.erda.cluster.client.ShardMap;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * Each member cleans its own log ([cleaning], [cluster]) with the default, automatic clean threshold: two member
 * processes with 1 MiB log regions and one head, each primary of one shard and backup of the other (so every PUT's
 * object lands on both), under an update load that writes twelve regions' worth to each.
 */
class ClusterCleaningTest {
    private static final long REGION = 1L << 20;
    private static final int KEYS = 40;
    private static final int VALUE = 4000;

    private MemberCluster cluster;

    @BeforeEach
    void startCluster() throws Exception {
        cluster = new MemberCluster(2, (id, root) -> List.of("--shards", "2", "--initial-servers", "2", "--heads", "1",
                "--table-capacity", "4096", "--region-size", "1m", "--segment-size", "64k"));
    }

    @AfterEach
    void stopCluster() throws Exception {
        cluster.close();
    }

    @Test
    void membersUnderUpdatesCleanTheirLogsAndKeepTheirChainsBounded() throws Exception {
        Map<Integer, Long> largest = new ConcurrentHashMap<>();
        try (ClusterClient cluster = ClusterClient.connect(this.cluster.zk)) {
            cluster.awaitMap(m -> m != null && m.state(0) == ShardMap.State.FULL && m.state(1) == ShardMap.State.FULL
                    && cluster.serverUri(1) != null && cluster.serverUri(2) != null, java.time.Duration.ofSeconds(30));
            List<ErdaClient> servers = List.of(server(cluster, 1), server(cluster, 2));
            byte[][] last = new byte[KEYS][];
            long written = 0;
            for (int round = 0; written < 12 * REGION; round++) {
                for (int k = 0; k < KEYS; k++) {
                    byte[] value = new byte[VALUE];
                    Arrays.fill(value, (byte) ('a' + round % 26));
                    value[0] = (byte) round;
                    cluster.put(("key-" + k).getBytes(), value);
                    last[k] = value;
                    written += VALUE;
                }
                for (int id = 1; id <= 2; id++) { // sampled after every round of 160 KB
                    largest.merge(id, occupied(servers.get(id - 1)), Math::max);
                }
            }
            for (int k = 0; k < KEYS; k++) {
                assertThat(cluster.get(("key-" + k).getBytes())).as("key-" + k).isEqualTo(last[k]);
            }
            for (int id = 1; id <= 2; id++) {
                Map<String, String> stats = servers.get(id - 1).serverStats();
                assertThat(stats.get("clean_threshold_auto")).as("member " + id + " cleans automatically").isEqualTo("1");
                assertThat(Long.parseLong(stats.get("cleanings"))).as("cleanings of member " + id)
                        .isGreaterThanOrEqualTo(2);
                // cleaned once over two regions; a chain may grow on by a round or two while a run copies
                assertThat(largest.get(id)).as("largest chain of member " + id + " (bytes) while "
                        + written + " were written to it").isLessThan(5 * REGION);
                // and an admin run works on a member too (erda-cli URI clean HEAD)
                assertThat(servers.get(id - 1).clean(0)).containsKey("live_bytes_copied");
            }
            servers.forEach(ErdaClient::close);
        }
    }

    private static ErdaClient server(ClusterClient cluster, int id) {
        return ErdaClient.connect(ClientOptions.of(cluster.serverUri(id)).withPoolSize(1));
    }

    private static long occupied(ErdaClient server) {
        return Long.parseLong(server.serverStats().get("head_0_occupied_bytes"));
    }
}
