package io.erda.cleaner;

import io.erda.core.testing.ShmTempDirFactory;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.erda.core.PmDirectory;
import io.erda.core.log.CleaningPhase;
import io.erda.core.log.LogHead;
import io.erda.core.pm.WriteLatencyModel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.SplittableRandom;
import java.util.concurrent.CountDownLatch;
import java.util.stream.Stream;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * A crash at every phase boundary and in the middle of every phase, with PUTs and DELETEs running:
 * the hook stops the cleaner and the writer at once (the writer's reservation in flight stays torn),
 * the store is abandoned, reopened, recovered (docs/ARCHITECTURE.md, [recovery], then
 * {@link LogCleaner#resume}) and every acknowledged PUT must read back.
 */
class CleaningCrashTest {
    static final int KEYS = 300;

    @TempDir(factory = ShmTempDirFactory.class)
    Path dir;

    @ParameterizedTest
    @EnumSource(CleaningPoint.class)
    void crashAtEveryPointOfCleaningLosesNoAcknowledgedPut(CleaningPoint crashPoint) throws Exception {
        Checker checker = new Checker();
        PmDirectory crashed = PmDirectory.create(dir, LogCleanerTest.GEOMETRY, WriteLatencyModel.OFF);
        SimulatedServer server = new SimulatedServer(crashed);
        for (int round = 0; round < 3; round++) {
            for (int i = 0; i < KEYS; i++) {
                checker.acknowledged("key-" + i, server.put("key-" + i, false), false);
            }
        }
        CountDownLatch writing = new CountDownLatch(200);
        Thread writer = new Thread(() -> {
            SplittableRandom random = new SplittableRandom(crashPoint.ordinal());
            try {
                while (true) {
                    String key = "key-" + random.nextInt(KEYS);
                    boolean delete = random.nextInt(10) == 0;
                    long version = server.put(key, delete);
                    if (version > 0) {
                        checker.acknowledged(key, version, delete);
                    }
                    writing.countDown();
                }
            } catch (SimulatedServer.Crashed expected) {
                // the process died
            }
        });
        writer.start();
        writing.await();
        LogCleaner cleaner = new LogCleaner(crashed, server, (head, point) -> {
            if (point == crashPoint) {
                server.crashed.set(true);
                throw new SimulatedServer.Crashed();
            }
        });
        assertThatThrownBy(() -> cleaner.clean(0)).isInstanceOf(SimulatedServer.Crashed.class);
        writer.join();
        crashed.close(); // unmapping is all that happens to the files: no shutdown work

        try (PmDirectory store = PmDirectory.open(dir, LogCleanerTest.GEOMETRY, WriteLatencyModel.OFF)) {
            SimulatedServer restarted = new SimulatedServer(store);
            restarted.rollBackIncomplete();
            LogCleaner recovery = new LogCleaner(store, restarted, CleaningHook.NONE);
            for (int head : recovery.interruptedHeads()) {
                recovery.resume(head);
            }
            for (int i = 0; i < KEYS; i++) {
                checker.checkedGet(restarted, "key-" + i);
            }
            assertThat(store.headRecords().phase(0)).isEqualTo(CleaningPhase.IDLE);
            assertThat(store.headRecords().generation(0)).as("every point lies after the MERGE commit").isEqualTo(1);
            assertThat(LogCleanerTest.everyEntryPointsIntoItsCurrentChain(store)).isTrue();
            LogHead head = store.head(0);
            try (Stream<Path> files = Files.list(dir)) {
                assertThat(files.filter(f -> f.getFileName().toString().startsWith("head-00000-region-")).count())
                        .as("no region file outside the head's chain").isEqualTo(head.currentChain().size());
            }
            // the recovered store cleans again and still reads back
            recovery.clean(0);
            for (int i = 0; i < KEYS; i++) {
                checker.checkedGet(restarted, "key-" + i);
            }
        }
    }
}
