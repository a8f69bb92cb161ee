package io.erda.server.store;

import io.erda.core.LogObjects;
import io.erda.core.PmDirectory;
import io.erda.core.table.HopscotchTable;
import io.erda.fabric.IdleStrategy;
import io.erda.protocol.RepairHintReply.Outcome;
import io.erda.protocol.memory.AtomicWord;
import io.erda.protocol.memory.Key;
import io.erda.protocol.memory.LogAddress;
import java.util.ArrayList;
import java.util.List;
import java.util.SequencedCollection;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.LongPredicate;
import java.util.function.Predicate;

/**
 * The store's reservations and their settlement (docs/ARCHITECTURE.md, [leases], [last-complete-version]): a
 * reservation is a lease; once the newest lease of a key has expired, the key is settled: its current object is
 * checked and, if incomplete, its entry is rolled back with one atomic word store to the last complete version (or
 * removed if there is none). {@link LeaseValidator} drives {@link #settleExpired}; a client's REPAIR_HINT settles a
 * key at once if no lease of it is running; the cleaner waits in {@link #settledBefore} before it retires a chain.
 * Shares the store's lock: every method takes it, except {@link #add}, which the store calls holding it.
 */
final class Leases {
    /** Keys {@link #settleExpired} settles per hold of the store lock. */
    private static final int SETTLE_BATCH = 64;
    /**
     * Deadline records {@link #settleExpired} takes off the queue per hold of the store lock, live or stale (a record
     * a newer reservation of its key or a drop made stale): without a bound, a backlog of stale ones would be walked
     * in one hold, workers waiting on the lock for milliseconds.
     */
    static final int POLLS_PER_HOLD = 4 * SETTLE_BATCH;

    private final ReentrantLock lock;
    private final Condition reserved;
    private final PmDirectory directory;
    private final HopscotchTable table;
    private final LogObjects objects;
    private final Reservations reservations;
    private final KeyEntries entries;
    private final StoreStats stats;
    private final long leaseNanos;
    /** Per head, entries {@link #settle} rolled back to an older version (guarded by the store lock). */
    private final long[] rollbacksByHead;
    /**
     * What {@link Reservations#add} prunes with: {@link #complete}, but false for a record whose region a cleaning has
     * retired meanwhile (an older record of a key whose newer version was complete may name a freed slot, see
     * {@link #settledBefore}): nothing is pruned on its account. One instance, not a lambda per PUT.
     */
    private final java.util.function.Predicate<Reservation> completeCheck = r -> {
        try {
            return complete(r);
        } catch (IllegalStateException retired) {
            return false;
        }
    };

    Leases(ReentrantLock lock, PmDirectory directory, LogObjects objects, Reservations reservations, KeyEntries entries,
           StoreStats stats, long leaseNanos) {
        this.lock = lock;
        this.reserved = lock.newCondition();
        this.directory = directory;
        this.table = directory.table();
        this.objects = objects;
        this.reservations = reservations;
        this.entries = entries;
        this.stats = stats;
        this.leaseNanos = leaseNanos;
        this.rollbacksByHead = new long[directory.heads().size()];
    }

    long leaseNanos() {
        return leaseNanos;
    }

    /** Records a reservation the store just made (the caller holds the store lock); wakes an idle validator. */
    void add(Reservation r) {
        if (reservations.earliest() == null) {
            reserved.signal();
        }
        reservations.add(r, completeCheck);
    }

    /** Whether {@code r}'s object is complete (written whole, CRC valid, with its key). */
    boolean complete(Reservation r) {
        return objects.isComplete(r.head(), LogAddress.unitsForBytes(r.chainOffset()), r.key().bytes());
    }

    /**
     * A client's hint that {@code key}'s newest object looks torn. Acts only if no lease of the key is running:
     * then the key is settled at once, as the validator would.
     */
    Outcome repairHint(Key key) {
        lock.lock();
        try {
            stats.repairHints.increment();
            Reservation newest = reservations.newest(key);
            if (newest != null && !newest.expired(System.nanoTime())) {
                return complete(newest) ? Outcome.COMPLETE : Outcome.LEASE_RUNNING;
            }
            return settle(key);
        } finally {
            lock.unlock();
        }
    }

    /**
     * Settles every key whose newest reservation's lease has expired by {@code now}; returns the nanoseconds until
     * the next deadline, or -1 if nothing is pending.
     *
     * <p>In batches: under the store lock, take the due reservations that are still their key's newest; without it,
     * read and check their objects (the bulk of the work: a CRC over each object); under the lock again, drop the
     * records of each key whose object is complete, unless a newer reservation of the key came meanwhile (its own
     * deadline settles the key), and settle the others as {@link #repairHint} does. A due reservation's region is
     * not retired while it is pending unless its object is complete, and a check that fails or finds it gone leaves
     * the key to the locked settlement, which decides from the entry. So a validator the scheduler preempts (two
     * cores) mostly does not hold the lock meanwhile.
     */
    long settleExpired(long now) {
        return settleExpired(now, this::checkHere);
    }

    /** As {@link #settleExpired(long)}, with the objects of each batch checked by {@code checks}. */
    long settleExpired(long now, ObjectChecks checks) {
        return settleExpired(now, this::giveWay, checks);
    }

    /** As {@link #settleExpired(long)}, running {@code betweenBatches} after each batch. */
    long settleExpired(long now, Runnable betweenBatches) {
        return settleExpired(now, betweenBatches, this::checkHere);
    }

    /**
     * Checks the objects of a batch of due reservations without the store lock: {@code complete[i]} for
     * {@code due.get(i)}, false where the check fails or finds it gone (the locked settlement then decides from the
     * entry). {@link LeaseValidator} runs them on a thread of lower priority than the one that holds the lock.
     */
    interface ObjectChecks {
        void check(List<Reservation> due, boolean[] complete);
    }

    /** {@link ObjectChecks} on the calling thread. */
    void checkHere(List<Reservation> due, boolean[] complete) {
        for (int i = 0; i < due.size(); i++) {
            try {
                complete[i] = complete(due.get(i));
            } catch (RuntimeException goneMeanwhile) {
                complete[i] = false; // e.g. its region retired: the locked settlement decides from the entry
            }
        }
    }

    private long settleExpired(long now, Runnable betweenBatches, ObjectChecks checks) {
        List<Reservation> due = new ArrayList<>(SETTLE_BATCH);
        boolean[] complete = new boolean[SETTLE_BATCH];
        while (true) {
            due.clear();
            int polled = 0;
            lock.lock();
            try {
                Reservation next;
                while (due.size() < SETTLE_BATCH && polled < POLLS_PER_HOLD && (next = reservations.earliest()) != null
                        && next.expired(now)) {
                    polled++;
                    Reservation newest = reservations.pollEarliest();
                    if (newest != null) {
                        due.add(newest);
                    }
                }
                if (due.isEmpty() && polled < POLLS_PER_HOLD) {
                    next = reservations.earliest();
                    return next == null ? -1 : next.deadline() - now;
                }
            } finally {
                lock.unlock();
            }
            if (due.isEmpty()) { // only stale records in this hold: give way, then go on
                betweenBatches.run();
                continue;
            }
            checks.check(due, complete);
            lock.lock();
            try {
                for (int i = 0; i < due.size(); i++) {
                    Reservation r = due.get(i);
                    if (!r.isNewest()) {
                        continue; // settled already, or a newer reservation of the key came meanwhile
                    }
                    if (complete[i]) {
                        reservations.drop(r.key()); // its newest object is complete: nothing to roll back
                    } else {
                        settle(r.key());
                    }
                }
            } finally {
                lock.unlock(); // between batches: a validator settling a quarter lease of PUTs must not stall them
            }
            betweenBatches.run();
        }
    }

    /**
     * Between two batches: lets request threads waiting for the store lock in ({@link #letWaitersIn}), then gives up
     * the CPU to any runnable thread. A PUT's request and reply are moved by the fabric's threads (shm: the pollers of
     * client and server, once the waiting threads park); a validator settling its backlog without yielding could keep
     * a core for a whole time slice while they stood runnable, and the PUT waited that long.
     */
    private void giveWay() {
        letWaitersIn(lock);
        Thread.yield();
    }

    /** Longest a thread that holds the store lock in batches waits, between two, for the threads queued on it. */
    static final long LET_IN_NANOS = 5_000_000;

    /**
     * Between two batches under {@code lock} (just released): lets the threads queued on it (request workers) take
     * it before the caller takes it back, waiting {@link #LET_IN_NANOS} at most. The lock is not fair, so a thread
     * that unlocks and locks again at once keeps it while a queued worker is still being woken, and the PUT that came
     * meanwhile would wait for the whole backlog (a quarter lease of PUTs: tens of milliseconds at 40k PUTs/s). With
     * this, a PUT waits for one batch at most. The caller parks between looks rather than yields: a yielding thread
     * keeps its core, and a woken worker queued behind another thread on the other core could not run on it.
     */
    static void letWaitersIn(ReentrantLock lock) {
        long start = System.nanoTime();
        IdleStrategy idle = null;
        while (lock.hasQueuedThreads() && System.nanoTime() - start < LET_IN_NANOS) {
            if (idle == null) {
                idle = LET_IN.newStrategy();
            }
            idle.idle();
        }
        if (idle != null) {
            idle.reset();
        }
    }

    /** How {@link #letWaitersIn} waits between two looks at the lock's queue. */
    private static final IdleStrategy.Policy LET_IN = IdleStrategy.Policy.park("store-lock-let-in", 20_000, 20_000);

    /** Whether a lease is due by {@code now} (the validator measures CPU only when there is work). */
    boolean hasExpired(long now) {
        lock.lock();
        try {
            Reservation next = reservations.earliest();
            return next != null && next.expired(now);
        } finally {
            lock.unlock();
        }
    }

    /** Waits until a reservation is added, for at most {@code nanos} (forever if negative). */
    void awaitReservation(long nanos) throws InterruptedException {
        lock.lock();
        try {
            if (nanos < 0) {
                reserved.await();
            } else if (nanos > 0) {
                reserved.await(nanos, TimeUnit.NANOSECONDS);
            }
        } finally {
            lock.unlock();
        }
    }

    /**
     * Whether every key of {@code head} with a reservation issued before {@code issuedBeforeNanos} is settled: its
     * newest reservation (the entry's current version, by {@link Store}'s invariant) is complete, so no rollback will
     * consult its older records, or the validator has settled the key (the cleaner's wait before retiring a chain).
     * Older records of a key whose newest is complete are ignored: they may name slots a cleaning has since freed.
     * Takes the store lock a shard of keys at a time: the caller must not hold it.
     */
    boolean settledBefore(int head, long issuedBeforeNanos) {
        // under the lock only the candidates, a shard of keys per hold; objects are read and checked without it: with a
        // lease's worth of PUTs pending (100 k keys) one hold over every key would keep every PUT waiting for tens of
        // milliseconds
        List<Reservation> candidates = new ArrayList<>();
        anyKeyShardByShard(records -> {
            Reservation newest = records.getLast();
            if (newest.head() == head && issuedBefore(records.getFirst(), issuedBeforeNanos)) {
                candidates.add(newest);
            }
            return false;
        });
        List<Reservation> complete = new ArrayList<>();
        boolean settled = true;
        for (Reservation newest : candidates) {
            // complete once, complete for good: the key's records from before are settled whatever comes after. And a
            // key found without such records in its shard's hold cannot gain one: later records are issued later.
            // Every candidate is checked, so that each complete one is dropped (below) and checked only once
            if (completeCheck.test(newest)) {
                complete.add(newest);
            } else if (settled && !settledNow(newest.key(), issuedBeforeNanos)) {
                settled = false;
            }
        }
        dropIfNewest(complete);
        return settled;
    }

    /**
     * Drops the records of each key whose newest record is one of {@code complete} (found complete): nothing of them is
     * rolled back, as the validator drops them at their deadline. Not leaving them there matters: this run may retire
     * the region such a record names, and a later run would find the slot freed or reused and take the record for an
     * incomplete PUT to wait for until its deadline (in one-sided mode, where updates make no reservations, an insert's
     * record was the key's newest for its whole lease, and a cleaning waited for it up to 0.9 s).
     */
    private void dropIfNewest(List<Reservation> complete) {
        if (complete.isEmpty()) {
            return;
        }
        lock.lock();
        try {
            for (Reservation r : complete) {
                if (r.isNewest()) {
                    reservations.drop(r.key());
                }
            }
        } finally {
            lock.unlock();
        }
    }

    /**
     * Whether {@code test} holds for some key (as {@link Reservations#anyKeyIn} asks), the store lock taken per shard of
     * keys and the request threads queued on it let in between ({@link #letWaitersIn}): for the cleaner's questions,
     * whose answers hold once found for a key.
     */
    private boolean anyKeyShardByShard(Predicate<SequencedCollection<Reservation>> test) {
        for (int shard = 0; shard < Reservations.SHARDS; shard++) {
            boolean found;
            lock.lock();
            try {
                found = reservations.anyKeyIn(shard, test);
            } finally {
                lock.unlock();
            }
            if (found) {
                return true;
            }
            letWaitersIn(lock);
        }
        return false;
    }

    private boolean issuedBefore(Reservation r, long issuedBeforeNanos) {
        return r.deadline() - leaseNanos - issuedBeforeNanos < 0;
    }

    /** {@link #settledBefore} for one key whose newest object was found incomplete, checked again under the lock. */
    private boolean settledNow(Key key, long issuedBeforeNanos) {
        lock.lock();
        try {
            SequencedCollection<Reservation> records = reservations.of(key);
            return records.isEmpty() || !issuedBefore(records.getFirst(), issuedBeforeNanos)
                    || completeCheck.test(records.getLast());
        } finally {
            lock.unlock();
        }
    }

    /** How many entries of {@code head} a settlement has rolled back to an older version (only grows). */
    long rollbacks(int head) {
        lock.lock();
        try {
            return rollbacksByHead[head];
        } finally {
            lock.unlock();
        }
    }

    /**
     * Whether settling a key of {@code head} could still point its entry at a version of a word {@code word} accepts:
     * the key's newest object is incomplete, so a rollback is due, and one of its records' words before the flip
     * (where {@link KeyEntries#newestComplete} looks for the way back) is accepted. Records of a key whose newest
     * object is complete are not: no rollback of it is due, and one due later stops at that complete version first.
     * Takes the store lock a shard of keys at a time: the caller must not hold it.
     */
    boolean rollbackMayRestore(int head, LongPredicate word) {
        return anyKeyShardByShard(records -> {
            Reservation newest = records.getLast();
            if (newest.head() != head) {
                return false;
            }
            for (Reservation r : records) {
                if (word.test(r.wordBefore())) {
                    return !completeCheck.test(newest);
                }
            }
            return false;
        });
    }

    /** The key's pending reservations, oldest first; the caller holds the store lock. */
    SequencedCollection<Reservation> of(Key key) {
        return reservations.of(key);
    }

    /** How many pending reservations {@code key} has. */
    int records(Key key) {
        lock.lock();
        try {
            return reservations.of(key).size();
        } finally {
            lock.unlock();
        }
    }

    /** Pending reservations (keys with a lease outstanding). */
    int pendingKeys() {
        lock.lock();
        try {
            return reservations.keys();
        } finally {
            lock.unlock();
        }
    }

    /**
     * Checks the key's current object; if it is incomplete, rolls the entry back with one CAS of the atomic word to
     * the last complete version, or removes the entry if there is none. A CAS lost to a client's one-sided update
     * decides again from the word that update left (whose current the client wrote complete). Drops the key's records
     * either way.
     */
    private Outcome settle(Key key) {
        try {
            int position = entries.find(key);
            if (position < 0) {
                return Outcome.NOT_FOUND;
            }
            int head = key.head(directory.heads().size());
            for (;;) {
                long word = table.atomicWord(position);
                long current = AtomicWord.current(word);
                if (objects.isComplete(head, current, key.bytes())) {
                    return Outcome.COMPLETE;
                }
                long target = entries.newestComplete(head, key, word, current, true);
                if (target == AtomicWord.NONE) {
                    if (table.remove(position, word)) {
                        stats.removedEntries.increment();
                        return Outcome.REMOVED;
                    }
                } else if (table.compareAndSetAtomicWord(position, word, AtomicWord.withCurrent(word, target))) {
                    rollbacksByHead[head]++;
                    stats.rollbacks.increment();
                    return Outcome.ROLLED_BACK;
                }
            }
        } finally {
            reservations.drop(key);
        }
    }
}
