package io.erda.core.table;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.erda.core.pm.WriteLatencyModel;
import io.erda.core.testing.CasClient;
import io.erda.core.testing.ShmTempDirFactory;
import io.erda.core.testing.TableChurn;
import io.erda.core.testing.WordHistory;
import io.erda.protocol.memory.AtomicWord;
import io.erda.protocol.memory.HashEntryLayout;
import io.erda.protocol.memory.TableGeometry;
import io.erda.protocol.memory.Words;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Every writer of a word changes it by CAS: clients' CASes racing the table's own writers are never lost. */
class HopscotchTableCasTest {
    /** Offsets of client key k are {@code k << KEY_SHIFT | sequence}, so a word tells whose it is and never repeats. */
    private static final int KEY_SHIFT = 20;
    /**
     * Updates of one key at most: clients that race a removal keep winning for as long as the server is descheduled,
     * and a sequence of {@code 1 << KEY_SHIFT} would spill into the key's bits.
     */
    private static final long MAX_SEQUENCE = 1 << 12;
    private static final long SERVER_OFFSETS = 1L << 30;

    @TempDir(factory = ShmTempDirFactory.class)
    Path dir;

    private HopscotchTable create(long capacity, int neighbourhood) {
        return create(capacity, neighbourhood, WriteLatencyModel.OFF);
    }

    private HopscotchTable create(long capacity, int neighbourhood, WriteLatencyModel latency) {
        return HopscotchTable.create(dir.resolve("table.pm"), TableGeometry.forCapacity(capacity, neighbourhood), latency);
    }

    private static long clientOffset(int key, long sequence) {
        return ((long) key << KEY_SHIFT) | sequence;
    }

    /** Locates client key {@code key} (hash {@code hash}) by the owner encoded in its current offset. */
    private static CasClient.Locator locator(HopscotchTable table, long hash, int key) {
        return () -> {
            long[] found = new long[2];
            int position = table.lookup(hash, (p, word, head) -> {
                found[1] = word;
                return AtomicWord.current(word) >>> KEY_SHIFT == key;
            });
            if (position < 0) {
                return null;
            }
            found[0] = position;
            return found;
        };
    }

    /**
     * Locates client key {@code key} as a remote client does, without the table's lock: the first word of the key's
     * neighbourhood that is the key's (its offsets say whose it is), frozen or not; the locked lookup if none is (a
     * scan that raced a move).
     */
    private static CasClient.Locator unlockedLocator(HopscotchTable table, long hash, int key) {
        TableGeometry g = table.geometry();
        long home = g.homeBucket(hash);
        CasClient.Locator locked = locator(table, hash, key);
        return () -> {
            for (long p = home; p < Math.min(home + g.neighbourhood(), g.bucketCount()); p++) {
                long word = table.atomicWord(p);
                if (AtomicWord.current(word) >>> KEY_SHIFT == key) {
                    return new long[] {p, word};
                }
            }
            return locked.locate();
        };
    }

    private static long wordOffset(HopscotchTable table, int position) {
        return table.geometry().bucketOffset(position) + HashEntryLayout.ATOMIC_WORD_OFFSET;
    }

    @Test
    void casFromAWordNoLongerThereLosesAndChangesNothing() {
        try (HopscotchTable table = create(64, 8)) {
            long first = AtomicWord.initial(5);
            int position = table.insert(77, 0, first);
            long client = AtomicWord.withNewVersion(first, 6);
            assertThat(Words.compareAndSet(table.region().data(), wordOffset(table, position), first, client)).isTrue();

            assertThat(table.compareAndSetAtomicWord(position, first, AtomicWord.withNewVersion(first, 7))).isFalse();
            assertThat(table.remove(position, first)).isFalse();
            assertThat(table.atomicWord(position)).isEqualTo(client);
            assertThat(table.count()).isEqualTo(1);
            assertThat(table.compareAndSetAtomicWord(position, client, AtomicWord.withNewVersion(client, 7))).isTrue();
            assertThat(AtomicWord.current(table.atomicWord(position))).isEqualTo(7);
        }
    }

    @Test
    void frozenWordsAreTheTablesOwnAndRefusedFromCallers() {
        try (HopscotchTable table = create(64, 8)) {
            long word = AtomicWord.initial(5);
            int position = table.insert(77, 0, word);
            assertThatThrownBy(() -> table.compareAndSetAtomicWord(position, AtomicWord.frozen(word), word))
                    .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("frozen");
            assertThatThrownBy(() -> table.remove(position, AtomicWord.frozen(word)))
                    .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("frozen");
        }
    }

    @Test
    void insertIntoABucketSomeoneCasedRefusesNamingTheBucket() {
        try (HopscotchTable table = create(64, 8)) {
            long hash = 77;
            long home = table.geometry().homeBucket(hash);
            Words.compareAndSet(table.region().data(), wordOffset(table, (int) home), 0, AtomicWord.initial(3));
            assertThatThrownBy(() -> table.insert(hash, 0, AtomicWord.initial(4)))
                    .isInstanceOf(IllegalStateException.class).hasMessageContaining("free bucket " + home);
        }
    }

    @Test
    void reopenUnfreezesWordsAndZeroesWordsOfEmptyBuckets() {
        Path file = dir.resolve("table.pm");
        long word = AtomicWord.withNewVersion(AtomicWord.initial(5), 9);
        long hash = 77;
        int position;
        long empty;
        try (HopscotchTable table = create(64, 8)) {
            position = table.insert(hash, 0, word);
            empty = (position + 1) % 64;
            // what a crash inside a move leaves: a frozen word, and a word in a bucket whose meta never became valid
            Words.compareAndSet(table.region().data(), wordOffset(table, position), word, AtomicWord.frozen(word));
            Words.setRelease(table.region().data(), wordOffset(table, (int) empty), AtomicWord.initial(11));
            table.region().persist(0, table.geometry().bucketOffset(64));
        }
        try (HopscotchTable table = HopscotchTable.open(file, WriteLatencyModel.OFF)) {
            assertThat(table.atomicWord(position)).isEqualTo(word);
            assertThat(table.atomicWord(empty)).isZero();
            assertThat(table.compareAndSetAtomicWord(position, word, AtomicWord.withNewVersion(word, 12))).isTrue();
        }
    }

    @Test
    void checkerCatchesAStoreOverAWordItsWriterDidNotRead() {
        try (HopscotchTable table = create(64, 8)) {
            long first = AtomicWord.initial(clientOffset(1, 1));
            int position = table.insert(77, 0, first);
            WordHistory history = new WordHistory(first);
            long read = table.atomicWord(position); // a writer decides from this word ...
            long client = AtomicWord.withNewVersion(first, clientOffset(1, 2));
            assertThat(Words.compareAndSet(table.region().data(), wordOffset(table, position), first, client)).isTrue();
            history.changed("client", first, client);
            long server = AtomicWord.withCurrent(read, SERVER_OFFSETS); // ... and stores over the client's word
            Words.setRelease(table.region().data(), wordOffset(table, position), server);
            history.changed("server", read, server);

            assertThat(history.anomaly(table.atomicWord(position))).contains("two changes won from the same word");
            WordHistory unrecorded = new WordHistory(first);
            unrecorded.changed("client", first, client);
            assertThat(unrecorded.anomaly(table.atomicWord(position))).contains("entry holds");
            WordHistory clean = new WordHistory(first);
            clean.changed("client", first, client);
            assertThat(clean.anomaly(client)).isNull();
        }
    }

    @Test
    void clientCasesAreNeverLostToInsertsThatMoveTheirEntries() throws Exception {
        int keys = 256;
        int updatesPerClient = 20_000;
        // slow PM stores (busy-waits per cache line) widen a move's span from reading the word to clearing its bucket
        try (HopscotchTable table = create(1024, 8, new WriteLatencyModel(20_000))) {
            Random random = new Random(11);
            long[] hashes = new long[keys + 1];
            WordHistory[] histories = new WordHistory[keys + 1];
            int[] positionsBefore = new int[keys + 1];
            AtomicLong[] sequences = new AtomicLong[keys + 1];
            for (int k = 1; k <= keys; k++) {
                hashes[k] = random.nextLong();
                long first = AtomicWord.initial(clientOffset(k, 1));
                positionsBefore[k] = table.insert(hashes[k], 0, first);
                histories[k] = new WordHistory(first);
                sequences[k] = new AtomicLong(1);
            }
            List<CasClient> clients = new ArrayList<>();
            List<Thread> threads = new ArrayList<>();
            for (int c = 0; c < 2; c++) {
                CasClient client = new CasClient(table, "client" + c);
                clients.add(client);
                Random own = new Random(100 + c);
                threads.add(Thread.ofPlatform().start(() -> {
                    for (int i = 0; i < updatesPerClient; i++) {
                        int k = 1 + own.nextInt(keys);
                        assertThat(client.update(unlockedLocator(table, hashes[k], k), clientOffset(k, sequences[k].incrementAndGet()),
                                histories[k])).isTrue();
                    }
                }));
            }
            // the server: inserts (which displace entries) and removes of its own keys, until the clients are done
            TableChurn server = new TableChurn(table, 13, 400, 560, SERVER_OFFSETS);
            for (Thread t : threads) {
                t.join();
            }
            assertThat(server.stop()).as("server inserts and removals").isPositive();

            int moved = 0;
            for (int k = 1; k <= keys; k++) {
                long[] found = locator(table, hashes[k], k).locate();
                assertThat(found).as("key %d", k).isNotNull();
                assertThat(histories[k].anomaly(found[1])).as("key %d", k).isNull();
                moved += found[0] != positionsBefore[k] ? 1 : 0;
            }
            assertThat(moved).as("client entries the inserts moved").isPositive();
            int changes = 0;
            for (int k = 1; k <= keys; k++) {
                changes += histories[k].size();
            }
            assertThat(changes).isEqualTo(2 * updatesPerClient);
            System.out.println("inserts vs CAS clients: " + moved + " of " + keys + " client entries moved, "
                    + clients.stream().mapToLong(CasClient::lost).sum() + " client CASes lost and retried");
        }
    }

    @Test
    void clientCasesAreNeverLostToRemovalsDecidedFromAnOlderWord() throws Exception {
        int keys = 200;
        try (HopscotchTable table = create(1024, 16)) {
            Random random = new Random(12);
            long[] hashes = new long[keys + 1];
            WordHistory[] histories = new WordHistory[keys + 1];
            AtomicLong[] sequences = new AtomicLong[keys + 1];
            for (int k = 1; k <= keys; k++) {
                hashes[k] = random.nextLong();
                long first = AtomicWord.initial(clientOffset(k, 1));
                table.insert(hashes[k], 0, first);
                histories[k] = new WordHistory(first);
                sequences[k] = new AtomicLong(1);
            }
            AtomicBoolean removalsDone = new AtomicBoolean();
            java.util.concurrent.atomic.AtomicInteger removing = new java.util.concurrent.atomic.AtomicInteger(1);
            List<CasClient> clients = new ArrayList<>();
            List<Thread> threads = new ArrayList<>();
            for (int c = 0; c < 2; c++) {
                CasClient client = new CasClient(table, "client" + c);
                clients.add(client);
                Random own = new Random(200 + c);
                threads.add(Thread.ofPlatform().start(() -> {
                    while (!removalsDone.get()) {
                        int k = Math.min(keys, removing.get() + own.nextInt(2)); // the key being removed, or the next
                        long sequence = sequences[k].incrementAndGet();
                        if (sequence >= MAX_SEQUENCE) {
                            Thread.yield(); // the key's offsets are used up; the server's removal comes through
                            continue;
                        }
                        client.update(unlockedLocator(table, hashes[k], k), clientOffset(k, sequence), histories[k]);
                    }
                }));
            }
            long lostRemovals = 0;
            for (int k = 1; k <= keys; k++) {
                removing.set(k);
                for (;;) {
                    long[] found = locator(table, hashes[k], k).locate();
                    assertThat(found).as("key %d before its removal (sequence %d)", k, sequences[k].get()).isNotNull();
                    java.util.concurrent.locks.LockSupport.parkNanos(20_000); // clients get between decision and removal
                    if (table.remove((int) found[0], found[1])) {
                        histories[k].changed("server", found[1], WordHistory.REMOVED);
                        break;
                    }
                    lostRemovals++;
                }
            }
            removalsDone.set(true);
            for (Thread t : threads) {
                t.join();
            }
            assertThat(table.count()).isZero();
            long clientChanges = 0;
            for (int k = 1; k <= keys; k++) {
                assertThat(histories[k].anomaly(WordHistory.REMOVED)).as("key %d", k).isNull();
                clientChanges += histories[k].size() - 1;
            }
            assertThat(clientChanges).as("client CASes won").isPositive();
            System.out.println("removals vs CAS clients: " + lostRemovals + " removals lost and decided again, "
                    + clientChanges + " client CASes won, most updates of one key "
                    + java.util.Arrays.stream(sequences, 1, keys + 1).mapToLong(AtomicLong::get).max().orElse(0));
        }
    }
}
