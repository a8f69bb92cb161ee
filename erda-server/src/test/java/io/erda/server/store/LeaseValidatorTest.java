package io.erda.server.store;

import io.erda.core.testing.ShmTempDirFactory;
import io.erda.protocol.RepairHintReply.Outcome;
import io.erda.protocol.memory.AtomicWord;
import io.erda.protocol.memory.LogAddress;
import io.erda.server.TestStores;
import java.lang.foreign.MemorySegment;
import java.nio.file.Path;
import java.time.Duration;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import static io.erda.server.TestStores.bytes;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * Leases and rollback (docs/ARCHITECTURE.md, [leases] and [last-complete-version]) on a store, driving the validator's
 * settlement with an explicit clock instead of waiting.
 */
class LeaseValidatorTest {
    private static final Duration LEASE = Duration.ofSeconds(30);

    @TempDir(factory = ShmTempDirFactory.class)
    Path dir;

    private Store store;

    private Store open(Duration lease) {
        store = TestStores.config(dir, "tcp", lease).openStore(new StoreStats());
        return store;
    }

    @AfterEach
    void close() {
        if (store != null) {
            store.close();
        }
    }

    private void settleAfterEveryLease() {
        store.leases().settleExpired(System.nanoTime() + 2 * store.leaseNanos());
    }

    private long currentOffset(String key) {
        long[] word = {0};
        store.directory().table().forEach((p, w, fp, h) -> word[0] = w);
        assertThat(store.keys()).as("single-key helper").isEqualTo(1);
        return AtomicWord.current(word[0]);
    }

    private static Store.Reserved reserveOnly(Store store, String key, int valueLength) {
        return store.reserve(MemorySegment.ofArray(bytes(key)), valueLength, false);
    }

    @Test
    void reservationNeverWrittenIsRolledBackToThePreviousVersion() {
        open(LEASE);
        Store.Reserved v1 = TestStores.put(store, "k", "one");
        reserveOnly(store, "k", 3);
        assertThat(TestStores.get(store, "k")).isEqualTo("one");

        settleAfterEveryLease();

        assertThat(currentOffset("k")).isEqualTo(LogAddress.unitsForBytes(v1.chainOffset()));
        assertThat(TestStores.get(store, "k")).isEqualTo("one");
        assertThat(store.leases().pendingKeys()).isZero();
    }

    @Test
    void twoTornWritersOfOneKeyLeaveTheOlderCompleteVersion() {
        open(LEASE);
        Store.Reserved v1 = TestStores.put(store, "k", "one");
        Store.Reserved v2 = reserveOnly(store, "k", 3);
        reserveOnly(store, "k", 5);
        long[] word = {0};
        store.directory().table().forEach((p, w, fp, h) -> word[0] = w);
        // the word alone no longer names v1: its previous is v2, torn
        assertThat(AtomicWord.previous(word[0])).isEqualTo(LogAddress.unitsForBytes(v2.chainOffset()));

        settleAfterEveryLease();

        assertThat(currentOffset("k")).isEqualTo(LogAddress.unitsForBytes(v1.chainOffset()));
        assertThat(TestStores.get(store, "k")).isEqualTo("one");
    }

    @Test
    void aKeyUpdatedFasterThanItsLeasesKeepsFewRecordsAndStillRollsBackToItsLastCompleteVersion() {
        open(LEASE);
        Store.Reserved last = null;
        for (int i = 0; i < 1000; i++) {
            last = TestStores.put(store, "hot", "v" + i);
            assertThat(store.leases().records(io.erda.protocol.memory.Key.of(MemorySegment.ofArray(bytes("hot")))))
                    .as("records after PUT %d (all 30 s leases still running)", i)
                    .isLessThanOrEqualTo(Reservations.PRUNE_AT);
        }
        reserveOnly(store, "hot", 4); // a writer that dies
        reserveOnly(store, "hot", 4); // and another

        settleAfterEveryLease();

        assertThat(currentOffset("hot")).isEqualTo(LogAddress.unitsForBytes(last.chainOffset()));
        assertThat(TestStores.get(store, "hot")).isEqualTo("v999");
        assertThat(store.leases().pendingKeys()).isZero();
    }

    @Test
    void recordsBehindOnlyTornVersionsAreKeptSoTheRollbackStillReachesTheOldCompleteOne() {
        open(LEASE);
        Store.Reserved v1 = TestStores.put(store, "k", "one");
        for (int i = 0; i < 3 * Reservations.PRUNE_AT; i++) {
            reserveOnly(store, "k", 3); // writers that all die: nothing complete to prune behind
        }
        assertThat(store.leases().records(io.erda.protocol.memory.Key.of(MemorySegment.ofArray(bytes("k"))))).isEqualTo(1 + 3 * Reservations.PRUNE_AT);

        settleAfterEveryLease();

        assertThat(currentOffset("k")).isEqualTo(LogAddress.unitsForBytes(v1.chainOffset()));
        assertThat(TestStores.get(store, "k")).isEqualTo("one");
    }

    @Test
    void newKeyNeverWrittenIsRemoved() {
        open(LEASE);
        reserveOnly(store, "ghost", 4);
        assertThat(store.keys()).isEqualTo(1);

        settleAfterEveryLease();

        assertThat(store.keys()).isZero();
        assertThat(TestStores.get(store, "ghost")).isNull();
    }

    @Test
    void completeReservationIsKeptWhenItsLeaseExpires() {
        open(LEASE);
        TestStores.put(store, "k", "one");
        Store.Reserved v2 = TestStores.put(store, "k", "two");

        settleAfterEveryLease();

        assertThat(currentOffset("k")).isEqualTo(LogAddress.unitsForBytes(v2.chainOffset()));
        assertThat(TestStores.get(store, "k")).isEqualTo("two");
        assertThat(store.leases().pendingKeys()).isZero();
    }

    @Test
    void liveWriterInsideItsLeaseIsNotRolledBackEvenWithARepairHint() {
        open(LEASE);
        TestStores.put(store, "k", "one");
        Store.Reserved v2 = reserveOnly(store, "k", 3);

        assertThat(store.repairHint(MemorySegment.ofArray(bytes("k")))).isEqualTo(Outcome.LEASE_RUNNING);
        assertThat(currentOffset("k")).isEqualTo(LogAddress.unitsForBytes(v2.chainOffset()));

        TestStores.writeObject(store, v2, bytes("k"), bytes("two"), false); // the slow writer finishes in time
        assertThat(TestStores.get(store, "k")).isEqualTo("two");
        settleAfterEveryLease();
        assertThat(TestStores.get(store, "k")).isEqualTo("two");
    }

    @Test
    void repairHintRollsBackOnceTheLeaseHasExpired() throws InterruptedException {
        open(Duration.ofMillis(50));
        Store.Reserved v1 = TestStores.put(store, "k", "one");
        reserveOnly(store, "k", 3);
        Outcome outcome;
        while ((outcome = store.repairHint(MemorySegment.ofArray(bytes("k")))) == Outcome.LEASE_RUNNING) {
            Thread.sleep(10);
        }
        assertThat(outcome).isEqualTo(Outcome.ROLLED_BACK);
        assertThat(currentOffset("k")).isEqualTo(LogAddress.unitsForBytes(v1.chainOffset()));
        assertThat(store.repairHint(MemorySegment.ofArray(bytes("k")))).isEqualTo(Outcome.COMPLETE);
    }

    /**
     * The validator settles its backlog in batches (64 keys) and lets a request waiting for the store lock in between
     * two: the lock is not fair, and a validator that unlocked and at once locked again kept it for its whole backlog
     * while a woken worker lost every race for it (scale-bench: a PUT waited 46 ms).
     */
    @Test
    void aRequestWaitingForTheLockGetsInBetweenTwoBatchesOfSettlement() throws Exception {
        store = TestStores.config(dir, "tcp", LEASE).withGeometry(TestStores.HEADS, 1 << 14, TestStores.REGION,
                TestStores.SEGMENT).openStore(new StoreStats());
        int batches = 20;
        for (int i = 0; i < batches * 64; i++) {
            TestStores.put(store, "old-" + i, "v");
        }
        long expired = System.nanoTime() + store.leaseNanos();
        int[] pendingWhenLetIn = {-1};
        Thread validator = Thread.ofPlatform().unstarted(() -> store.leases().settleExpired(expired));
        Thread request = Thread.ofPlatform().unstarted(() -> store.locked(() -> pendingWhenLetIn[0] = store.leases().pendingKeys()));
        store.locked(() -> { // both queue on the lock, the validator first
            validator.start();
            awaitWaiting(validator);
            request.start();
            awaitWaiting(request);
            return null;
        });
        validator.join();
        request.join();
        assertThat(pendingWhenLetIn[0]).as("keys still to settle when the waiting request got the lock (of %d)", batches * 64)
                .isGreaterThanOrEqualTo(batches / 2 * 64);
        assertThat(store.leases().pendingKeys()).isZero();
    }

    /** The validator gives way (the lock to waiting requests, the CPU to runnable threads) after every batch. */
    @Test
    void theValidatorGivesWayAfterEveryBatchOfItsBacklog() {
        store = TestStores.config(dir, "tcp", LEASE).withGeometry(TestStores.HEADS, 1 << 14, TestStores.REGION,
                TestStores.SEGMENT).openStore(new StoreStats());
        int keys = 10 * 64 + 1;
        for (int i = 0; i < keys; i++) {
            TestStores.put(store, "k" + i, "v");
        }
        int[] pauses = {0};
        long next = store.leases().settleExpired(System.nanoTime() + 2 * store.leaseNanos(), () -> pauses[0]++);

        assertThat(next).as("nothing left pending").isEqualTo(-1);
        assertThat(store.leases().pendingKeys()).isZero();
        assertThat(pauses[0]).as("a pause after each of the 11 batches").isEqualTo(11);
    }

    /**
     * Stale deadline records (a key's older reservation, pruned when a newer complete one came) are taken off the
     * queue {@link Leases#POLLS_PER_HOLD} at a time too: a backlog of them is not walked in one hold of the lock.
     */
    @Test
    void theValidatorGivesWayWithinABacklogOfStaleRecords() {
        store = TestStores.config(dir, "tcp", LEASE).withGeometry(TestStores.HEADS, 1 << 14, TestStores.REGION,
                TestStores.SEGMENT).openStore(new StoreStats());
        int keys = 300;
        for (int round = 0; round < 2; round++) {
            for (int i = 0; i < keys; i++) {
                TestStores.put(store, "k" + i, "v" + round); // the second round leaves the first's records stale
            }
        }
        assertThat(store.leases().pendingKeys()).isEqualTo(keys);
        int[] pauses = {0};
        long next = store.leases().settleExpired(System.nanoTime() + 2 * store.leaseNanos(), () -> pauses[0]++);

        assertThat(next).as("nothing left pending").isEqualTo(-1);
        assertThat(store.leases().pendingKeys()).isZero();
        // 256 stale records in the first hold (no batch: a pause), 44 stale and 64 live in the second, then 64, 64,
        // 64 and 44 live; one walk through the 300 stale records would have made it 5
        assertThat(pauses[0]).as("pauses while settling %d keys behind %d stale records", keys, keys).isEqualTo(6);
    }

    /** Waits until {@code t} parks (here: on the store lock). */
    private static void awaitWaiting(Thread t) {
        while (t.getState() != Thread.State.WAITING) {
            Thread.onSpinWait();
        }
    }

    @Test
    void rolledBackKeyTakesNewVersionsAgain() {
        open(LEASE);
        TestStores.put(store, "k", "one");
        reserveOnly(store, "k", 3);
        settleAfterEveryLease();
        TestStores.put(store, "k", "three");
        assertThat(TestStores.get(store, "k")).isEqualTo("three");
        reserveOnly(store, "k", 4);
        settleAfterEveryLease();
        assertThat(TestStores.get(store, "k")).isEqualTo("three");
    }

    /**
     * The object checks run on a thread of their own at nice {@link LeaseValidator#NICE}, as the kernel reports it for
     * that thread; the validator thread, which holds the store lock, keeps the priority of the thread that started it.
     */
    @Test
    void theCheckerRunsAtItsNiceValueAndTheValidatorAtItsStartersPriority() throws Exception {
        open(Duration.ofMillis(50));
        LeaseValidator validator = new LeaseValidator(store.leases(), new StoreStats());
        int startersNice = niceOf(Path.of("/proc/thread-self/stat"));
        Thread t = Thread.ofPlatform().name("validator-nice").start(validator::run);
        try {
            TestStores.put(store, "k", "v"); // the checker starts with the first batch, when this lease has expired
            int nice = Integer.MIN_VALUE;
            for (long deadline = System.nanoTime() + 10_000_000_000L; System.nanoTime() < deadline; Thread.sleep(10)) {
                nice = niceOfThread(LeaseValidator.CHECKER_NAME);
                if (nice == LeaseValidator.NICE) {
                    break;
                }
            }
            assertThat(nice).as("nice of the checker thread (/proc/self/task/*/stat)").isEqualTo(LeaseValidator.NICE);
            assertThat(niceOfThread("validator-nice")).as("nice of the validator thread").isEqualTo(startersNice)
                    .isNotEqualTo(LeaseValidator.NICE);
        } finally {
            validator.stop();
            t.interrupt();
            t.join();
        }
    }

    /** Field 19 (nice) of the stat of this process's thread named {@code name}, or MIN_VALUE if none has it yet. */
    private static int niceOfThread(String name) throws java.io.IOException {
        try (var tasks = java.nio.file.Files.list(Path.of("/proc/self/task"))) {
            for (Path task : tasks.toList()) {
                // the kernel keeps a thread's first 15 characters of name
                if (java.nio.file.Files.readString(task.resolve("comm")).strip().equals(name.substring(0, Math.min(15, name.length())))) {
                    return niceOf(task.resolve("stat"));
                }
            }
        }
        return Integer.MIN_VALUE;
    }

    /** Field 19 (nice) of a thread's stat file. */
    private static int niceOf(Path stat) throws java.io.IOException {
        String line = java.nio.file.Files.readString(stat);
        return Integer.parseInt(line.substring(line.lastIndexOf(')') + 2).split(" ")[19 - 3]);
    }
}
