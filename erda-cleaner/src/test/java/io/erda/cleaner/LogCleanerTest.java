package io.erda.cleaner;

import static org.assertj.core.api.Assertions.assertThat;

import io.erda.core.PmDirectory;
import io.erda.core.StoreGeometry;
import io.erda.core.log.CleaningPhase;
import io.erda.core.log.LogChain;
import io.erda.core.log.LogHead;
import io.erda.core.log.LogScanner;
import io.erda.core.pm.WriteLatencyModel;
import io.erda.core.testing.ShmTempDirFactory;
import io.erda.protocol.memory.AtomicWord;
import io.erda.protocol.memory.LogAddress;
import io.erda.protocol.memory.LogGeometry;
import io.erda.protocol.memory.ObjectLayout;
import io.erda.protocol.memory.TableGeometry;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class LogCleanerTest {
    /** 64 KiB regions of 16 KiB segments: a few hundred objects span several regions. */
    static final StoreGeometry GEOMETRY = new StoreGeometry(2, TableGeometry.forCapacity(4096, 32),
            new LogGeometry(64 * 1024, 16 * 1024, 4096));

    @TempDir(factory = ShmTempDirFactory.class)
    Path dir;

    @Test
    void cleaningKeepsTheNewestVersionOfEveryKeyAndFreesStaleAndDeletedSpace() throws Exception {
        try (PmDirectory store = PmDirectory.create(dir, GEOMETRY, WriteLatencyModel.OFF)) {
            SimulatedServer server = new SimulatedServer(store);
            Map<String, Long> latest = new HashMap<>();
            for (int round = 0; round < 5; round++) {
                for (int i = 0; i < 300; i++) {
                    latest.put("key-" + i, server.put("key-" + i, false));
                }
            }
            Set<String> deleted = new HashSet<>();
            for (int i = 0; i < 300; i += 3) {
                server.put("key-" + i, true);
                deleted.add("key-" + i);
            }
            int head = 0;
            long entriesBefore = store.table().count();
            List<Path> oldFiles = regionFiles(head);

            CleaningReport report = new LogCleaner(store, server, CleaningHook.NONE).clean(head);

            for (int i = 0; i < 300; i++) {
                String key = "key-" + i;
                assertThat(server.get(key)).as(key).isEqualTo(deleted.contains(key) ? 0 : latest.get(key));
            }
            long liveBytes = liveBytes(store, head);
            assertThat(report.liveBytesCopied()).isEqualTo(liveBytes);
            // after = live data + per-segment header and tail slack (< one largest object per segment)
            long segments = report.occupiedAfter() / GEOMETRY.log().segmentSize() + 1;
            assertThat(report.occupiedAfter()).isBetween(liveBytes, liveBytes + segments * (8 + ObjectLayout.length(5, 208)));
            assertThat(report.occupiedBefore()).isGreaterThan(4 * report.occupiedAfter());
            long deletedInHead = deleted.stream().filter(k -> SimulatedServer.headOf(k, 2) == head).count();
            assertThat(report.entriesRemoved()).isEqualTo(deletedInHead);
            assertThat(store.table().count()).isEqualTo(entriesBefore - deletedInHead);
            assertThat(store.headRecords().phase(head)).isEqualTo(CleaningPhase.IDLE);
            assertThat(store.headRecords().generation(head)).isEqualTo(1);
            assertThat(oldFiles).allMatch(f -> !Files.exists(f));
            assertThat(everyEntryPointsIntoItsCurrentChain(store)).isTrue();
        }
    }

    @Test
    void oldRegionIsZeroedBeforeItsSlotCanBeReusedByTheNextCleaning() throws Exception {
        try (PmDirectory store = PmDirectory.create(dir, GEOMETRY, WriteLatencyModel.OFF)) {
            SimulatedServer server = new SimulatedServer(store);
            for (int round = 0; round < 3; round++) {
                for (int i = 0; i < 200; i++) {
                    server.put("k" + i, false);
                }
            }
            Path slot0 = regionFiles(0).getFirst();
            try (Arena arena = Arena.ofShared(); FileChannel channel = FileChannel.open(slot0, StandardOpenOption.READ)) {
                // a second mapping of the file, as an shm client holds: it still sees the inode after the delete
                MemorySegment client = channel.map(FileChannel.MapMode.READ_ONLY, 0, Files.size(slot0), arena);
                assertThat(nonZeroBytes(client)).isPositive();
                LogCleaner cleaner = new LogCleaner(store, server, CleaningHook.NONE);
                cleaner.clean(0);
                assertThat(Files.exists(slot0)).isFalse();
                assertThat(nonZeroBytes(client.asSlice(4096))).as("data area after retire").isZero();
                assertThat(store.head(0).currentChain().slots()).doesNotContain(0);

                cleaner.clean(0); // the second new chain takes the lowest free slot: 0 again
                assertThat(store.head(0).currentChain().slots()).contains(0);
            }
            Set<Long> current = new HashSet<>();
            store.table().forEach((p, word, f, h) -> {
                if (h == 0) {
                    current.add(LogAddress.bytesForUnits(AtomicWord.current(word)));
                }
            });
            List<Long> scanned = new java.util.ArrayList<>();
            LogScanner.scan(store.head(0), LogScanner.Mode.RESYNC, (offset, object) -> scanned.add(offset));
            assertThat(scanned).as("no stale object validates in the reused slot").containsExactlyInAnyOrderElementsOf(current);
            for (int i = 0; i < 200; i++) {
                assertThat(server.get("k" + i)).isPositive();
            }
        }
    }

    /**
     * The merge copies an object without the store lock and records the copy afterwards, only if the object is still
     * its key's current version: a PUT of the key between the copy and its record (here where the cleaner reports the
     * copy written) keeps its version, and the copy, now stale, is not recorded (recording it into the word as it was
     * before the PUT would undo the PUT's flip).
     */
    @Test
    void aPutBetweenACopyAndItsRecordKeepsItsVersion() throws Exception {
        try (PmDirectory store = PmDirectory.create(dir, GEOMETRY, WriteLatencyModel.OFF)) {
            SimulatedServer server = new SimulatedServer(store);
            String key = java.util.stream.IntStream.range(0, 100).mapToObj(i -> "k" + i)
                    .filter(k -> SimulatedServer.headOf(k, 2) == 0).findFirst().orElseThrow();
            for (int round = 0; round < 3; round++) {
                server.put(key, false);
            }
            long[] during = new long[1];
            server.onCopyWritten = () -> during[0] = server.put(key, false);

            CleaningReport report = new LogCleaner(store, server, CleaningHook.NONE).clean(0);

            assertThat(during[0]).as("the PUT ran between the copy and its record").isPositive();
            assertThat(server.get(key)).isEqualTo(during[0]);
            // the PUT wrote to the old chain (the merge runs before writes are redirected): the replication copies it
            assertThat(report.objectsCopied()).as("the PUT's version; the superseded copy is not recorded").isEqualTo(1);
            // the relocation goes by the entries: the two older versions are never visited, only the superseded copy
            assertThat(report.staleSkipped()).as("the superseded copy").isEqualTo(1);
            assertThat(everyEntryPointsIntoItsCurrentChain(store)).isTrue();
        }
    }

    static long nonZeroBytes(MemorySegment segment) {
        long n = 0;
        for (long i = 0; i < segment.byteSize(); i += 8) {
            if (segment.get(ValueLayout.JAVA_LONG_UNALIGNED, i) != 0) {
                n++;
            }
        }
        return n;
    }

    private List<Path> regionFiles(int head) throws Exception {
        try (Stream<Path> files = Files.list(dir)) {
            return files.filter(f -> f.getFileName().toString().startsWith(String.format("head-%05d-region-", head)))
                    .sorted().toList();
        }
    }

    /** Bytes of the current objects of a head's live (non-tombstone) entries. */
    static long liveBytes(PmDirectory store, int head) {
        long[] sum = {0};
        store.table().forEach((p, word, f, h) -> {
            if (h == head) {
                MemorySegment object = store.head(h).slice(LogAddress.bytesForUnits(AtomicWord.current(word)), 12);
                int keyLength = Short.toUnsignedInt(object.get(io.erda.protocol.memory.Words.SHORT_U, ObjectLayout.KEY_LENGTH_OFFSET));
                int valueLength = object.get(io.erda.protocol.memory.Words.INT_U, ObjectLayout.VALUE_LENGTH_OFFSET);
                sum[0] += ObjectLayout.length(keyLength, valueLength);
            }
        });
        return sum[0];
    }

    /** Every entry's current and previous offsets lie in its head's current chain (or are none). */
    static boolean everyEntryPointsIntoItsCurrentChain(PmDirectory store) {
        boolean[] ok = {true};
        store.table().forEach((p, word, f, h) -> {
            LogChain chain = store.head(h).currentChain();
            for (long units : new long[] {AtomicWord.current(word), AtomicWord.previous(word)}) {
                if (units != AtomicWord.NONE && !chain.contains(LogAddress.bytesForUnits(units))) {
                    ok[0] = false;
                }
            }
        });
        return ok[0];
    }

    static LogHead head(PmDirectory store, String key) {
        return store.head(SimulatedServer.headOf(key, store.heads().size()));
    }
}
