package io.erda.server;

import io.erda.core.log.LogHead;
import io.erda.core.testing.ShmTempDirFactory;
import io.erda.server.store.Store;
import io.erda.server.store.StoreStats;
import java.lang.foreign.MemorySegment;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import static io.erda.server.TestStores.bytes;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * A log region made ahead is registered with the fabric as it is made, so the PUT whose reservation takes it into
 * the chain registers nothing under the store lock (docs/ARCHITECTURE.md, Logs).
 */
class RegionsRegisteredAheadTest {
    @TempDir(factory = ShmTempDirFactory.class)
    Path dir;

    @Test
    void theNextRegionArrivesRegisteredBeforeAPutNeedsIt() throws Exception {
        for (String scheme : TestStores.schemes()) {
            Path home = dir.resolve(scheme);
            ServerConfig config = TestStores.config(home, scheme, Duration.ofSeconds(30))
                    .withGeometry(1, 4096, TestStores.REGION, TestStores.SEGMENT);
            try (RequestServer server = RequestServer.start(config)) {
                LogHead head = server.store().directory().head(0);
                int key = 0;
                while (head.tail() < TestStores.REGION * 3 / 4) { // past half: the spare is being made
                    put(server, key++);
                }
                long deadline = System.nanoTime() + Duration.ofSeconds(30).toNanos();
                while (stats(server).get("regions_registered_ahead") < 1 && System.nanoTime() < deadline) {
                    Thread.sleep(10);
                }
                assertThat(stats(server)).as(scheme + ": the spare is registered before the chain needs it")
                        .containsEntry("regions_registered_ahead", 1L).containsEntry("regions_registered_at_growth", 0L);

                while (head.currentChain().size() < 2) {
                    put(server, key++);
                }

                Store.Reserved inNewRegion = put(server, key);
                assertThat(inNewRegion.regionIndex()).isEqualTo(1);
                assertThat(stats(server)).as(scheme + ": the growth took the registration made ahead")
                        .containsEntry("regions_registered_at_growth", 0L);
                assertThat(server.headArray().heads().getFirst().regions()).hasSize(2)
                        .allSatisfy(r -> assertThat(r.length()).isEqualTo(TestStores.REGION));
            }
        }
    }

    /** The preparer's thread runs from the store's open: the first spare's PUT does not start it. */
    @Test
    void theRegionPreparerRunsFromTheStoresOpen() {
        long before = preparers();
        Store store = TestStores.config(dir.resolve("open"), "tcp", Duration.ofSeconds(30)).openStore(new StoreStats());
        try {
            assertThat(preparers()).isEqualTo(before + 1);
        } finally {
            store.close();
        }
    }

    private static long preparers() {
        return Thread.getAllStackTraces().keySet().stream()
                .filter(t -> t.getName().equals("erda-region-preparer") && t.isAlive()).count();
    }

    private static Store.Reserved put(RequestServer server, int key) {
        return server.store().reserve(MemorySegment.ofArray(bytes("key-" + key)), 4000, false);
    }

    private static Map<String, Long> stats(RequestServer server) {
        return server.stats().lines().map(l -> l.split("=", 2))
                .collect(Collectors.toMap(kv -> kv[0], kv -> Long.parseLong(kv[1])));
    }
}
