package io.erda.core.table;

import static org.assertj.core.api.Assertions.assertThat;

import io.erda.core.pm.WriteLatencyModel;
import io.erda.core.testing.ShmTempDirFactory;
import io.erda.protocol.memory.AtomicWord;
import io.erda.protocol.memory.NeighbourhoodWindow;
import io.erda.protocol.memory.TableGeometry;
import io.erda.protocol.memory.Words;
import java.lang.foreign.MemorySegment;
import java.lang.invoke.VarHandle;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * One writer churns a nearly full table (inserts and removes force displacement moves of the
 * resident keys) while readers run the client protocol of {@link NeighbourhoodWindow} on the raw
 * mapped memory for keys that are always present. No reader may ever confirm a miss.
 */
class WindowReadDuringMovesStressTest {
    private static final int CAPACITY = 256;
    private static final int H = 8; // small H: many moves per insert at high load
    private static final int RESIDENTS = 120;
    private static final int CHURN_TARGET = 100;
    private static final int WRITER_OPERATIONS = 150_000;
    private static final int READERS = 3;

    @TempDir(factory = ShmTempDirFactory.class)
    Path dir;

    @Test
    void readersNeverConfirmAMissForAPresentKeyWhileEntriesMove() throws Exception {
        SplittableRandom random = new SplittableRandom(11);
        long[] residentHashes = new long[RESIDENTS];
        try (HopscotchTable table = HopscotchTable.create(dir.resolve("t.pm"), new TableGeometry(CAPACITY, H, H), WriteLatencyModel.OFF)) {
            for (int i = 0; i < RESIDENTS; i++) {
                residentHashes[i] = random.nextLong();
                table.insert(residentHashes[i], 0, residentWord(i));
            }
            AtomicBoolean done = new AtomicBoolean();
            AtomicLong confirmedMisses = new AtomicLong();
            AtomicLong lookups = new AtomicLong();
            AtomicLong retries = new AtomicLong();
            List<Thread> readers = new ArrayList<>();
            for (int r = 0; r < READERS; r++) {
                int seed = r;
                readers.add(Thread.ofPlatform().start(() ->
                        readUntilDone(table, residentHashes, seed, done, confirmedMisses, lookups, retries)));
            }
            long moves = churn(table, random);
            done.set(true);
            for (Thread reader : readers) {
                reader.join();
            }
            System.out.printf("stress: %d moves, %d lookups, %d miss retries, %d confirmed misses%n",
                    moves, lookups.get(), retries.get(), confirmedMisses.get());
            assertThat(confirmedMisses.get()).as("present keys reported absent").isZero();
            assertThat(moves).as("the writer must actually move entries").isGreaterThan(1000);
            assertThat(lookups.get()).isGreaterThan(1000);
        }
    }

    private static long residentWord(int i) {
        return AtomicWord.initial(i + 1);
    }

    /** Writer: keeps the table near full with short-lived keys; returns the number of moves (stripe bumps / 2). */
    private static long churn(HopscotchTable table, SplittableRandom random) {
        List<long[]> churned = new ArrayList<>();
        for (int op = 0; op < WRITER_OPERATIONS; op++) {
            if (churned.size() < CHURN_TARGET && random.nextInt(3) != 0) {
                long hash = random.nextLong();
                long word = AtomicWord.initial(1_000_000 + op);
                try {
                    table.insert(hash, 1, word);
                    churned.add(new long[] {hash, word});
                } catch (TableFullException full) {
                    // expected now and then at this load; nothing was changed
                }
            } else if (!churned.isEmpty()) {
                long[] victim = churned.remove(random.nextInt(churned.size()));
                table.remove(table.lookup(victim[0], (p, w, h) -> w == victim[1]), victim[1]);
            }
        }
        long bumps = 0;
        for (long stripe = 0; stripe < table.geometry().stripeCount(); stripe++) {
            bumps += table.stripeVersion(stripe);
        }
        return bumps / 2;
    }

    private static void readUntilDone(HopscotchTable table, long[] hashes, int seed, AtomicBoolean done,
                                      AtomicLong confirmedMisses, AtomicLong lookups, AtomicLong retries) {
        TableGeometry g = table.geometry();
        MemorySegment data = table.region().data();
        MemorySegment window = MemorySegment.ofArray(new byte[g.windowLength()]);
        SplittableRandom random = new SplittableRandom(seed);
        while (!done.get()) {
            int key = random.nextInt(hashes.length);
            long home = g.homeBucket(hashes[key]);
            lookups.incrementAndGet();
            copyWindowBackwards(data, g, home, window, random);
            if (hit(window, hashes[key], residentWord(key))) {
                continue;
            }
            while (true) { // miss: versions, window, versions
                MemorySegment before = readVersions(data, g, home);
                copyWindowBackwards(data, g, home, window, random);
                VarHandle.loadLoadFence();
                MemorySegment after = readVersions(data, g, home);
                if (hit(window, hashes[key], residentWord(key))) {
                    break;
                }
                if (NeighbourhoodWindow.missConfirmed(before, after)) {
                    confirmedMisses.incrementAndGet();
                    break;
                }
                retries.incrementAndGet();
            }
        }
    }

    /** Client-side hit: a candidate whose word is the expected one (stands in for the full-key check on the object). */
    private static boolean hit(MemorySegment window, long hash, long expectedWord) {
        for (long mask = NeighbourhoodWindow.candidates(window, H, hash); mask != 0; mask &= mask - 1) {
            long word = NeighbourhoodWindow.atomicWord(window, Long.numberOfTrailingZeros(mask));
            if (AtomicWord.current(word) != AtomicWord.NONE && word == expectedWord) {
                return true;
            }
        }
        return false;
    }

    /**
     * A NIC's READ gives no order among the bytes of one range. Copying the highest entry first is
     * the adversarial order for forward moves (copy written above, original cleared below): it can
     * see neither copy, which only the stripe versions reveal. A random pause between entries
     * stretches the READ over the writer's persist calls so the race actually happens.
     */
    private static void copyWindowBackwards(MemorySegment data, TableGeometry g, long home, MemorySegment window,
                                            SplittableRandom random) {
        for (int i = g.neighbourhood() - 1; i >= 0; i--) {
            MemorySegment.copy(data, g.windowOffset(home) + i * 16L, window, i * 16L, 16);
            long until = System.nanoTime() + random.nextInt(3_000);
            while (System.nanoTime() - until < 0) {
                Thread.onSpinWait();
            }
        }
    }

    private static MemorySegment readVersions(MemorySegment data, TableGeometry g, long home) {
        MemorySegment copy = MemorySegment.ofArray(new byte[g.windowVersionsLength(home)]);
        long offset = g.windowVersionsOffset(home);
        for (long i = 0; i < copy.byteSize(); i += Long.BYTES) {
            copy.set(Words.LONG_U, i, Words.getAcquire(data, offset + i));
        }
        return copy;
    }
}
