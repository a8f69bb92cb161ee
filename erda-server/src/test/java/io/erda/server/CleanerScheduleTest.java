package io.erda.server;

import static org.assertj.core.api.Assertions.assertThat;

import io.erda.core.testing.ShmTempDirFactory;
import java.nio.file.Path;
import java.time.Duration;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * When the background cleaner runs: a head over the threshold is cleaned once its chain has grown by half the
 * threshold since its last run, so a head whose live data fills more than half the threshold is not cleaned back to
 * back (it was: every 50 ms poll, each run copying all of it).
 */
class CleanerScheduleTest {
    private static final long THRESHOLD = 256 << 10;
    private static final int KEYS = 100;
    private static final String VALUE = "v".repeat(3000);

    @TempDir(factory = ShmTempDirFactory.class)
    Path dir;

    @Test
    void aHeadWhoseLiveDataFillsTheThresholdIsCleanedAgainOnlyAfterItGrows() throws Exception {
        ServerConfig config = TestStores.config(dir, "tcp", Duration.ofMillis(300)).withGeometry(1, 4096,
                TestStores.REGION, TestStores.SEGMENT);
        try (RequestServer server = RequestServer.start(config)) {
            Store store = server.store();
            for (int i = 0; i < KEYS; i++) { // ~300 KB live: over the threshold, and still so after cleaning
                TestStores.put(store, "key-" + i, VALUE);
            }
            server.startCleaning(THRESHOLD);
            awaitCleanings(server, 1);
            Thread.sleep(1000); // twenty polls of the cleaner: none may start a run, nothing was written
            assertThat(cleanings(server)).as("runs while nothing was written").isEqualTo(1);
            assertThat(store.directory().head(0).currentChain().logicalTail()).isGreaterThan(THRESHOLD / 2);

            for (int i = 0; i < KEYS / 2; i++) { // ~150 KB more: past half the threshold since the run
                TestStores.put(store, "key-" + i, VALUE);
            }
            awaitCleanings(server, 2);
            for (int i = 0; i < KEYS; i++) {
                assertThat(TestStores.get(store, "key-" + i)).as("key-" + i).isEqualTo(VALUE);
            }
        }
    }

    private static long cleanings(RequestServer server) {
        return TestStores.stat(server, "cleanings");
    }

    private static void awaitCleanings(RequestServer server, long count) throws InterruptedException {
        long deadline = System.nanoTime() + Duration.ofSeconds(30).toNanos();
        while (cleanings(server) < count && System.nanoTime() < deadline) {
            Thread.sleep(20);
        }
        assertThat(cleanings(server)).as("cleaning runs").isEqualTo(count);
    }
}
