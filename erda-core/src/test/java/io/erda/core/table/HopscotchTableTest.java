package io.erda.core.table;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.erda.core.pm.WriteLatencyModel;
import io.erda.core.testing.ShmTempDirFactory;
import io.erda.protocol.memory.AtomicWord;
import io.erda.protocol.memory.HashEntryLayout;
import io.erda.protocol.memory.NeighbourhoodWindow;
import io.erda.protocol.memory.TableGeometry;
import io.erda.protocol.memory.Words;
import java.lang.foreign.MemorySegment;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class HopscotchTableTest {
    @TempDir(factory = ShmTempDirFactory.class)
    Path dir;

    private HopscotchTable create(long capacity, int neighbourhood) {
        return HopscotchTable.create(dir.resolve("table.pm"), TableGeometry.forCapacity(capacity, neighbourhood), WriteLatencyModel.OFF);
    }

    /** The server's way to find a key: here the atomic word stands for the full-key check. */
    private static int find(HopscotchTable table, long hash, long word) {
        return table.lookup(hash, (position, atomicWord, headId) -> atomicWord == word);
    }

    @Test
    void capacityIsRoundedUpToAPowerOfTwo() {
        assertThat(TableGeometry.forCapacity(1000, 16).capacity()).isEqualTo(1024);
        assertThat(TableGeometry.forCapacity(1024, 16).capacity()).isEqualTo(1024);
        assertThat(TableGeometry.forCapacity(3, 16).capacity()).isEqualTo(16);
    }

    @Test
    void manyRandomKeysAreAllFoundWithTheirHeadAndWord() {
        Random random = new Random(1);
        Map<Long, Long> words = new HashMap<>();
        try (HopscotchTable table = create(4096, 16)) {
            for (int i = 1; words.size() < 3000; i++) {
                long hash = random.nextLong();
                long word = AtomicWord.initial(i);
                table.insert(hash, i % 7, word);
                words.put(hash, word);
            }
            assertThat(table.count()).isEqualTo(3000);
            for (Map.Entry<Long, Long> e : words.entrySet()) {
                int position = find(table, e.getKey(), e.getValue());
                assertThat(position).isNotNegative();
                assertThat(table.atomicWord(position)).isEqualTo(e.getValue());
            }
        }
    }

    @Test
    void removedKeysAreGoneAndCanBeReinserted() {
        Random random = new Random(2);
        try (HopscotchTable table = create(1024, 16)) {
            List<long[]> keys = new ArrayList<>();
            for (int i = 1; i <= 800; i++) {
                long hash = random.nextLong();
                table.insert(hash, 0, AtomicWord.initial(i));
                keys.add(new long[] {hash, AtomicWord.initial(i)});
            }
            for (int i = 0; i < 400; i++) {
                long[] k = keys.get(i);
                assertThat(table.remove(find(table, k[0], k[1]), k[1])).isTrue();
                assertThat(find(table, k[0], k[1])).isEqualTo(-1);
            }
            assertThat(table.count()).isEqualTo(400);
            for (int i = 0; i < 400; i++) {
                long[] k = keys.get(i);
                table.insert(k[0], 0, k[1]);
            }
            for (long[] k : keys) {
                assertThat(find(table, k[0], k[1])).isNotNegative();
            }
            assertThat(table.count()).isEqualTo(800);
        }
    }

    @Test
    void fullTableThrowsNamingCapacityAndLoadAndOverwritesNothing() {
        Random random = new Random(3);
        try (HopscotchTable table = create(64, 8)) {
            List<long[]> inserted = new ArrayList<>();
            assertThatThrownBy(() -> {
                for (int i = 1; ; i++) {
                    long hash = random.nextLong();
                    table.insert(hash, 0, AtomicWord.initial(i));
                    inserted.add(new long[] {hash, AtomicWord.initial(i)});
                }
            }).isInstanceOf(TableFullException.class).hasMessageContaining("capacity 64").hasMessageContaining("entries, load ");
            assertThat(table.count()).isEqualTo(inserted.size());
            for (long[] k : inserted) {
                assertThat(find(table, k[0], k[1])).isNotNegative();
            }
        }
    }

    @Test
    void reopenedTableFindsEverythingAgain() {
        Random random = new Random(4);
        Map<Long, Long> words = new HashMap<>();
        try (HopscotchTable table = create(2048, 16)) {
            for (int i = 1; i <= 1500; i++) {
                long hash = random.nextLong();
                table.insert(hash, 3, AtomicWord.initial(i));
                words.put(hash, AtomicWord.initial(i));
            }
        }
        try (HopscotchTable table = HopscotchTable.open(dir.resolve("table.pm"), WriteLatencyModel.OFF)) {
            assertThat(table.count()).isEqualTo(1500);
            assertThat(table.geometry()).isEqualTo(TableGeometry.forCapacity(2048, 16));
            words.forEach((hash, word) -> assertThat(find(table, hash, word)).isNotNegative());
            long[] visited = new long[1];
            table.forEach((position, word, fingerprint, head) -> {
                assertThat(head).isEqualTo(3);
                visited[0]++;
            });
            assertThat(visited[0]).isEqualTo(1500);
        }
    }

    @Test
    void updatedAtomicWordIsVisibleAndSurvivesReopen() {
        long hash = 0x1234_5678_9abc_def0L;
        try (HopscotchTable table = create(64, 16)) {
            int position = table.insert(hash, 1, AtomicWord.initial(5));
            assertThat(table.compareAndSetAtomicWord(position, AtomicWord.initial(5),
                    AtomicWord.withNewVersion(AtomicWord.initial(5), 9))).isTrue();
        }
        try (HopscotchTable table = HopscotchTable.open(dir.resolve("table.pm"), WriteLatencyModel.OFF)) {
            int position = table.lookup(hash, (p, w, h) -> true);
            assertThat(AtomicWord.current(table.atomicWord(position))).isEqualTo(9);
            assertThat(AtomicWord.previous(table.atomicWord(position))).isEqualTo(5);
        }
    }

    @Test
    void lastHomeBucketsWindowIsContiguousInTheOverflowBuckets() {
        try (HopscotchTable table = create(64, 16)) {
            long hash = 63; // home bucket 63, the last
            for (int i = 1; i <= 10; i++) {
                table.insert(hash, 0, AtomicWord.initial(i)); // same home: fill into the overflow buckets
            }
            TableGeometry g = table.geometry();
            MemorySegment window = table.region().data().asSlice(g.windowOffset(63), g.windowLength());
            assertThat(Long.bitCount(NeighbourhoodWindow.candidates(window, 16, hash))).isEqualTo(10);
            assertThat(g.windowOffset(63) + g.windowLength()).isLessThanOrEqualTo(g.stripeVersionsOffset());
        }
    }

    @Test
    void clientWindowFunctionFindsEveryPresentKey() {
        Random random = new Random(5);
        try (HopscotchTable table = create(1024, 16)) {
            TableGeometry g = table.geometry();
            for (int i = 1; i <= 900; i++) {
                long hash = random.nextLong();
                table.insert(hash, i % 4, AtomicWord.initial(i));
                MemorySegment copy = MemorySegment.ofArray(new byte[g.windowLength()]);
                MemorySegment.copy(table.region().data(), g.windowOffset(g.homeBucket(hash)), copy, 0, g.windowLength());
                long mask = NeighbourhoodWindow.candidates(copy, 16, hash);
                assertThat(mask).isNotZero();
                int index = Long.numberOfTrailingZeros(mask);
                assertThat(NeighbourhoodWindow.atomicWord(copy, index)).isEqualTo(AtomicWord.initial(i));
                assertThat(NeighbourhoodWindow.headId(copy, index)).isEqualTo(i % 4);
            }
        }
    }

    @Test
    void missIsConfirmedOnlyWhenVersionsAreEvenAndUnchanged() {
        MemorySegment even = versions(4, 8);
        assertThat(NeighbourhoodWindow.missConfirmed(even, versions(4, 8))).isTrue();
        assertThat(NeighbourhoodWindow.missConfirmed(versions(5, 8), versions(5, 8))).isFalse();
        assertThat(NeighbourhoodWindow.missConfirmed(even, versions(4, 10))).isFalse();
        assertThat(NeighbourhoodWindow.missConfirmed(even, versions(4))).isFalse();
    }

    private static MemorySegment versions(long... words) {
        MemorySegment segment = MemorySegment.ofArray(new byte[words.length * 8]);
        for (int i = 0; i < words.length; i++) {
            segment.set(Words.LONG_U, i * 8L, words[i]);
        }
        return segment;
    }

    @Test
    void windowVersionsCoverAtMostTwoStripes() {
        TableGeometry g = TableGeometry.forCapacity(1024, 16);
        assertThat(g.windowVersionsLength(0)).isEqualTo(8);
        assertThat(g.windowVersionsLength(1)).isEqualTo(16);
        assertThat(g.windowVersionsLength(1023)).isEqualTo(16);
        assertThat(g.windowVersionsOffset(17)).isEqualTo(g.stripeVersionOffset(1));
    }

    @Test
    void crashMidMoveLeavesDuplicateAndOddVersionWhichOpenRepairs() {
        long hash = 5;
        try (HopscotchTable table = create(64, 16)) {
            int position = table.insert(hash, 2, AtomicWord.initial(7));
            // what a crash between "copy persisted" and "original cleared" leaves behind
            MemorySegment data = table.region().data();
            long copyAt = table.geometry().bucketOffset(position + 3);
            long meta = Words.get(data, table.geometry().bucketOffset(position) + HashEntryLayout.META_OFFSET);
            data.set(Words.LONG_U, copyAt, AtomicWord.initial(7));
            data.set(Words.LONG_U, copyAt + HashEntryLayout.META_OFFSET, HashEntryLayout.withHopDistance(meta, 3));
            data.set(Words.LONG_U, table.geometry().stripeVersionOffset(0), 1);
        }
        try (HopscotchTable table = HopscotchTable.open(dir.resolve("table.pm"), WriteLatencyModel.OFF)) {
            assertThat(table.count()).isEqualTo(1);
            assertThat(table.stripeVersion(0)).isEqualTo(2);
            int[] seen = new int[1];
            table.forEach((p, w, f, h) -> seen[0]++);
            assertThat(seen[0]).isEqualTo(1);
        }
    }

    @Test
    void mutationsCostOnlyTheirEightByteStores() {
        try (HopscotchTable table = create(64, 16)) {
            long before = table.region().localBytesWritten();
            int position = table.insert(9, 0, AtomicWord.initial(1));
            assertThat(table.region().localBytesWritten() - before).as("create without move").isEqualTo(16);
            long updated = AtomicWord.withNewVersion(AtomicWord.initial(1), 2);
            table.compareAndSetAtomicWord(position, AtomicWord.initial(1), updated);
            assertThat(table.region().localBytesWritten() - before).as("+ update").isEqualTo(24);
            table.remove(position, updated);
            assertThat(table.region().localBytesWritten() - before).as("+ remove: freeze, then clear").isEqualTo(48);
        }
    }

    @Test
    void windowTornAcrossAMoveMissesTheKeyButVersionsRefuseToConfirmTheMiss() {
        try (HopscotchTable table = HopscotchTable.create(dir.resolve("t.pm"), new TableGeometry(64, 8, 8), WriteLatencyModel.OFF)) {
            TableGeometry g = table.geometry();
            for (long bucket = 0; bucket <= 8; bucket++) {
                table.insert(bucket | (bucket + 1) << 32, 0, AtomicWord.initial(bucket + 1)); // each at its home
            }
            long resident = 2 | 3L << 32; // home 2, at bucket 2
            MemorySegment windowBefore = snapshot(table, g.windowOffset(2), g.windowLength());
            MemorySegment versionsBefore = snapshot(table, g.windowVersionsOffset(2), g.windowVersionsLength(2));

            table.insert(99L << 32, 0, AtomicWord.initial(100)); // home 0, first free bucket 9: moves the resident 2 -> 9

            MemorySegment windowAfter = snapshot(table, g.windowOffset(2), g.windowLength());
            MemorySegment versionsAfter = snapshot(table, g.windowVersionsOffset(2), g.windowVersionsLength(2));
            assertThat(Long.numberOfTrailingZeros(NeighbourhoodWindow.candidates(windowAfter, 8, resident))).isEqualTo(7);
            // a READ that fetched bucket 9 before the move and bucket 2 after it sees the resident nowhere
            MemorySegment torn = MemorySegment.ofArray(new byte[g.windowLength()]);
            MemorySegment.copy(windowAfter, 0, torn, 0, 7 * 16);
            MemorySegment.copy(windowBefore, 7 * 16, torn, 7 * 16, 16);
            assertThat(NeighbourhoodWindow.candidates(torn, 8, resident)).isZero();
            assertThat(NeighbourhoodWindow.missConfirmed(versionsBefore, versionsAfter)).isFalse();
            assertThat(NeighbourhoodWindow.missConfirmed(versionsAfter, snapshot(table, g.windowVersionsOffset(2), 16))).isTrue();
        }
    }

    private static MemorySegment snapshot(HopscotchTable table, long offset, long length) {
        MemorySegment copy = MemorySegment.ofArray(new byte[(int) length]);
        MemorySegment.copy(table.region().data(), offset, copy, 0, length);
        return copy;
    }
}
