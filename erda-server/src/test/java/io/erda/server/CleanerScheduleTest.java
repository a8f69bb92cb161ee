package io.erda.server;

import static org.assertj.core.api.Assertions.assertThat;

import io.erda.core.testing.ShmTempDirFactory;
import io.erda.server.store.CleanThreshold;
import io.erda.server.store.Store;
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

    @Test
    void withTheAutomaticThresholdAHeadUnderUpdatesStaysWithinThreeRegionsAndTwiceItsLiveBytes() throws Exception {
        ServerConfig config = TestStores.config(dir, "tcp", Duration.ofMillis(300)).withGeometry(1, 4096,
                TestStores.REGION, TestStores.SEGMENT).toBuilder().cleanThreshold(CleanThreshold.AUTO).build();
        try (RequestServer server = RequestServer.start(config)) {
            server.startCleaning(); // as the config says: auto
            Store store = server.store();
            long written = 0;
            int round = 0;
            for (; written < 8 * TestStores.REGION; round++) { // ~300 KB live, 8 regions written
                for (int i = 0; i < KEYS; i++) {
                    TestStores.put(store, "key-" + i, VALUE + round);
                    written += VALUE.length();
                    // the writer may outrun a 50 ms poll of the cleaner; the bound is that the cleaner catches up
                    long deadline = System.nanoTime() + Duration.ofSeconds(10).toNanos();
                    while (chain(store) > 3 * TestStores.REGION && System.nanoTime() < deadline) {
                        Thread.sleep(5);
                    }
                    assertThat(chain(store)).as("chain bytes after " + written + " bytes written")
                            .isLessThanOrEqualTo(3 * TestStores.REGION);
                }
            }
            // the second run may still be finishing (a run counts once it has retired its old regions)
            awaitCleanings(server, 2);
            assertThat(cleanings(server)).as("runs while 8 regions were written").isGreaterThanOrEqualTo(2);
            assertThat(TestStores.stat(server, "head_0_clean_above_bytes")).isEqualTo(2 * TestStores.REGION);
            for (int i = 0; i < KEYS; i++) {
                assertThat(TestStores.get(store, "key-" + i)).as("key-" + i).isEqualTo(VALUE + (round - 1));
            }
        }
    }

    private static long chain(Store store) {
        return store.directory().head(0).currentChain().logicalTail();
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
