package io.erda.server;

import io.erda.core.PmDirectory;
import io.erda.core.StoreGeometry;
import io.erda.core.hash.Key;
import io.erda.core.layout.AtomicWord;
import io.erda.core.layout.LogAddress;
import io.erda.core.layout.ObjectCheck;
import io.erda.core.layout.ObjectFlyweight;
import io.erda.core.layout.ObjectLayout;
import io.erda.core.log.ChainPosition;
import io.erda.core.log.LogHead;
import io.erda.core.pm.WriteLatencyModel;
import io.erda.core.table.HopscotchTable;
import io.erda.core.table.TableFullException;
import io.erda.protocol.RepairHintReply.Outcome;
import io.erda.protocol.WireStatus;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;

/**
 * The store a server serves: the one place where the table and the logs change, under one lock (two cores; the
 * work under it is a few stores and a persist). Reservations are leases (docs/ARCHITECTURE.md, [leases]) settled by
 * {@link LeaseValidator} through {@link #settleExpired}.
 *
 * <p><b>Finding a key's entry.</b> Entries hold only a fingerprint, so a candidate is the key's entry if its
 * current object is complete with this key, or its current offset is a pending reservation of this key (not
 * written yet), or its previous object is complete with this key.
 *
 * <p><b>Invariant.</b> While a key has pending reservations, its entry's current offset is the newest of them: every
 * flip adds a record, and a rollback settles (drops) all records of the key. So the records' words-before-flip
 * chain back, newest to oldest, through every version a rollback might need ([last-complete-version]).
 */
public final class Store implements AutoCloseable {
    /** Told, under the store lock, when a reservation made a head's chain grow (register it, bump the head array). */
    interface ChainListener {
        void chainGrew(int head);
    }

    /** Where a reservation lies. */
    record Reserved(int head, long chainOffset, int objectLength, int regionIndex, long offsetInRegion) {
    }

    /** Keys {@link #settleExpired} settles per hold of the store lock. */
    private static final int SETTLE_BATCH = 64;

    private final PmDirectory directory;
    private final HopscotchTable table;
    private final LogObjects objects;
    private final Reservations reservations = new Reservations();
    private final ReentrantLock lock = new ReentrantLock();
    private final Condition reserved = lock.newCondition();
    private final long leaseNanos;
    private final StoreStats stats;
    private final Recovery.Summary recovery;
    private ChainListener chainListener = head -> { };

    private Store(PmDirectory directory, long leaseNanos, StoreStats stats, Recovery.Summary recovery) {
        this.directory = directory;
        this.table = directory.table();
        this.objects = new LogObjects(directory);
        this.leaseNanos = leaseNanos;
        this.stats = stats;
        this.recovery = recovery;
    }

    /**
     * Creates the store of {@code config} or reopens it (tails from the high-water marks, then {@link Recovery});
     * a store of another format version or geometry is refused with a {@code PmFormatException} naming both.
     */
    public static Store open(ServerConfig config, StoreStats stats) {
        StoreGeometry stored = config.storedGeometry();
        WriteLatencyModel latency = new WriteLatencyModel(config.pmWriteLatencyNanos());
        PmDirectory directory = stored == null
                ? PmDirectory.create(config.directory(), config.geometry(null), latency)
                : PmDirectory.open(config.directory(), config.geometry(stored), latency);
        try {
            Recovery.Summary summary = new Recovery(directory).run();
            return new Store(directory, config.lease().toNanos(), stats, summary);
        } catch (RuntimeException e) {
            directory.close();
            throw e;
        }
    }

    void onChainGrowth(ChainListener listener) {
        lock.lock();
        try {
            this.chainListener = listener;
        } finally {
            lock.unlock();
        }
    }

    public PmDirectory directory() {
        return directory;
    }

    public Recovery.Summary recoverySummary() {
        return recovery;
    }

    long leaseNanos() {
        return leaseNanos;
    }

    /** Largest padded object a reservation can hold (a segment minus its header). */
    long maxObjectLength() {
        return directory.geometry().log().maxObjectLength();
    }

    /** Largest value with a 1-byte key, for clients sizing buffers (the exact limit depends on the key length). */
    int maxValueLength() {
        return (int) Math.min(Integer.MAX_VALUE, maxObjectLength() - ObjectLayout.HEADER_LENGTH - 1);
    }

    // ------------------------------------------------------------------ PUT / DELETE (paper §3.3, §4.3)

    /**
     * Reserves room for an object (a tombstone when {@code delete}) at the tail of the key's head, flips the key's
     * entry to it (or inserts one) with one persisted 8-byte store, and records the lease.
     */
    Reserved reserve(MemorySegment keyBytes, int valueLength, boolean delete) {
        long objectLength = checkedObjectLength(keyBytes.byteSize(), valueLength);
        Key key = Key.copyOf(keyBytes);
        int head = key.head(directory.heads().size());
        LogHead log = directory.head(head);
        lock.lock();
        try {
            int position = find(key);
            if (position < 0 && delete) {
                throw new RequestException(WireStatus.NOT_FOUND, "DELETE of a key that does not exist");
            }
            long chainOffset = reserveTail(log, objectLength);
            long before = flip(key, position, head, LogAddress.unitsForBytes(chainOffset));
            if (reservations.earliest() == null) {
                reserved.signal();
            }
            reservations.add(new Reservation(key, head, chainOffset, (int) objectLength, System.nanoTime() + leaseNanos,
                    before));
            (delete ? stats.deletes : stats.puts).increment();
            stats.bytesReserved.add(objectLength);
            ChainPosition where = log.resolve(chainOffset);
            return new Reserved(head, chainOffset, (int) objectLength, where.regionIndex(), where.offsetInRegion());
        } finally {
            lock.unlock();
        }
    }

    // ------------------------------------------------------------------ baselines: server-side apply (paper §5.1)

    /**
     * Writes a complete object (a tombstone when {@code value} is null) at the tail of the key's head and flips
     * the key's entry to it, all by the server and under the store lock: the destination write of the Redo
     * Logging and Read After Write baselines. The object is in {@link ObjectLayout} and the entry update is the
     * same 8-byte word as Erda's (a create inserts an entry), so the destination's NVM bytes equal Erda's. The
     * object is persisted before the entry flips. A delete of a key without an entry writes nothing.
     *
     * @return whether anything was written
     */
    boolean apply(MemorySegment keyBytes, MemorySegment value, boolean delete) {
        long objectLength = checkedObjectLength(keyBytes.byteSize(), delete ? 0 : value.byteSize());
        Key key = Key.copyOf(keyBytes);
        int head = key.head(directory.heads().size());
        LogHead log = directory.head(head);
        lock.lock();
        try {
            int position = find(key);
            if (position < 0 && delete) {
                return false;
            }
            long chainOffset = reserveTail(log, objectLength);
            ChainPosition where = log.resolve(chainOffset);
            ObjectLayout.encode(where.region().data(), where.offsetInRegion(), keyBytes,
                    delete ? MemorySegment.NULL : value, delete);
            where.region().recordWrite(where.offsetInRegion(), objectLength);
            where.region().persist(where.offsetInRegion(), objectLength);
            flip(key, position, head, LogAddress.unitsForBytes(chainOffset));
            (delete ? stats.deletes : stats.puts).increment();
            return true;
        } finally {
            lock.unlock();
        }
    }

    /** Reserves at the head's tail (under the store lock), telling the chain listener if the chain grew. */
    private long reserveTail(LogHead log, long objectLength) {
        int regionsBefore = log.regions().size();
        long chainOffset;
        try {
            chainOffset = log.reserve(objectLength);
        } catch (IllegalStateException chainFull) {
            throw new RequestException(WireStatus.LOG_FULL, chainFull.getMessage());
        }
        if (log.regions().size() != regionsBefore) {
            chainListener.chainGrew(log.headId());
        }
        return chainOffset;
    }

    /**
     * Points the key's entry at {@code units} (the old current becomes previous) with one persisted 8-byte store,
     * or inserts an entry when {@code position} is negative; returns the word before (0 for an insert).
     */
    private long flip(Key key, int position, int head, long units) {
        if (position >= 0) {
            long before = table.atomicWord(position);
            table.updateAtomicWord(position, AtomicWord.withNewVersion(before, units));
            return before;
        }
        try {
            table.insert(key.hash(), head, AtomicWord.initial(units));
        } catch (TableFullException full) {
            throw new RequestException(WireStatus.TABLE_FULL, full.getMessage());
        }
        return 0;
    }

    /** Refuses (naming value and limit) a pair {@link #apply} could not store: checked before a baseline acknowledges. */
    void requireAppliable(long keyLength, long valueLength) {
        checkedObjectLength(keyLength, valueLength);
    }

    private long checkedObjectLength(long keyLength, long valueLength) {
        if (keyLength > ObjectLayout.MAX_KEY_LENGTH) {
            throw new RequestException(WireStatus.KEY_TOO_LONG, "key length " + keyLength + " exceeds "
                    + ObjectLayout.MAX_KEY_LENGTH);
        }
        if (keyLength < 1) {
            throw new RequestException(WireStatus.BAD_REQUEST, "key length " + keyLength + " is below 1");
        }
        if (valueLength < 0) {
            throw new RequestException(WireStatus.BAD_REQUEST, "value length " + valueLength + " is negative");
        }
        long objectLength = ObjectLayout.align(ObjectLayout.HEADER_LENGTH + keyLength + valueLength);
        if (objectLength > maxObjectLength()) {
            throw new RequestException(WireStatus.VALUE_TOO_LARGE, "value length " + valueLength + " with key length "
                    + keyLength + " makes an object of " + objectLength + " bytes, which exceeds the segment limit "
                    + maxObjectLength());
        }
        return objectLength;
    }

    // ------------------------------------------------------------------ GET (two-sided fallback)

    /** The value of the newest complete version of {@code key}, or null if the key is absent or deleted. */
    byte[] get(MemorySegment keyBytes) {
        checkedObjectLength(keyBytes.byteSize(), 0);
        Key key = Key.copyOf(keyBytes);
        lock.lock();
        try {
            stats.getsTwoSided.increment();
            int position = find(key);
            if (position < 0) {
                return null;
            }
            long word = table.atomicWord(position);
            int head = key.head(directory.heads().size());
            long units = newestComplete(head, key, word, AtomicWord.current(word), false);
            ObjectFlyweight object = new ObjectFlyweight();
            if (units == AtomicWord.NONE || !objects.wrap(head, units, object, key.bytes()).isValid()
                    || object.isTombstone()) {
                return null;
            }
            return object.value().toArray(ValueLayout.JAVA_BYTE);
        } finally {
            lock.unlock();
        }
    }

    // ------------------------------------------------------------------ FLUSH (persistence method server-flush)

    /** Makes a range a client wrote durable; it must lie inside the head's reserved log and one region. */
    void flush(int head, long chainOffset, int length) {
        int heads = directory.heads().size();
        if (head < 0 || head >= heads) {
            throw new RequestException(WireStatus.UNKNOWN_ADDRESS, "head " + head + " outside [0, " + heads + ")");
        }
        LogHead log = directory.head(head);
        if (!log.isReserved(chainOffset, length)) {
            throw new RequestException(WireStatus.UNKNOWN_ADDRESS, "range of " + length + " bytes at chain offset "
                    + chainOffset + " of head " + head + " lies outside its log (reserved ranges of the regions at slots "
                    + log.describe().regions().stream().map(r -> r.regionIndex()).toList() + ")");
        }
        ChainPosition where = log.resolve(chainOffset);
        long regionSize = log.geometry().regionSize();
        if (where.offsetInRegion() + length > regionSize) {
            throw new RequestException(WireStatus.UNKNOWN_ADDRESS, "range of " + length + " bytes at chain offset "
                    + chainOffset + " of head " + head + " crosses the end of region " + where.regionIndex());
        }
        where.region().persist(where.offsetInRegion(), length);
        stats.flushes.increment();
    }

    // ------------------------------------------------------------------ leases ([leases], [last-complete-version])

    /**
     * A client's hint that {@code key}'s newest object looks torn. Acts only if no lease of the key is running:
     * then the key is settled at once, as the validator would.
     */
    Outcome repairHint(MemorySegment keyBytes) {
        checkedObjectLength(keyBytes.byteSize(), 0);
        Key key = Key.copyOf(keyBytes);
        lock.lock();
        try {
            stats.repairHints.increment();
            Reservation newest = reservations.newest(key);
            if (newest != null && !newest.expired(System.nanoTime())) {
                return objects.isComplete(newest.head(), LogAddress.unitsForBytes(newest.chainOffset()), key.bytes())
                        ? Outcome.COMPLETE : Outcome.LEASE_RUNNING;
            }
            return settle(key);
        } finally {
            lock.unlock();
        }
    }

    /**
     * Settles every key whose newest reservation's lease has expired by {@code now}; returns the nanoseconds until
     * the next deadline, or -1 if nothing is pending.
     */
    long settleExpired(long now) {
        while (true) {
            lock.lock();
            try {
                Reservation next;
                int settled = 0;
                while ((next = reservations.earliest()) != null && next.expired(now)) {
                    if (settled == SETTLE_BATCH) {
                        break;
                    }
                    Reservation due = reservations.pollEarliest();
                    if (due != null) {
                        settle(due.key());
                        settled++;
                    }
                }
                if (next == null || !next.expired(now)) {
                    return next == null ? -1 : next.deadline() - now;
                }
            } finally {
                lock.unlock(); // between batches: a validator settling a quarter lease of PUTs must not stall them
            }
        }
    }

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

    /** Runs {@code action} under the store lock (the log cleaner's changes to table and heads). */
    <T> T locked(java.util.function.Supplier<T> action) {
        lock.lock();
        try {
            return action.get();
        } finally {
            lock.unlock();
        }
    }

    /**
     * Whether every key of {@code head} with a reservation issued before {@code issuedBeforeNanos} is settled: its
     * newest reservation (the entry's current version, by the invariant above) is complete, so no rollback will
     * consult its older records, or the validator has settled the key (the cleaner's wait before retiring a chain).
     * Older records of a key whose newest is complete are ignored: they may name slots a cleaning has since freed.
     */
    boolean settledBefore(int head, long issuedBeforeNanos) {
        lock.lock();
        try {
            for (Reservation[] key : reservations.oldestAndNewest()) {
                Reservation oldest = key[0];
                Reservation newest = key[1];
                if (newest.head() == head && oldest.deadline() - leaseNanos - issuedBeforeNanos < 0
                        && !objects.isComplete(head, LogAddress.unitsForBytes(newest.chainOffset()), newest.key().bytes())) {
                    return false;
                }
            }
            return true;
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
     * Checks the key's current object; if it is incomplete, rolls the entry back with one atomic word store to the
     * last complete version, or removes the entry if there is none. Drops the key's records either way.
     */
    private Outcome settle(Key key) {
        try {
            int position = find(key);
            if (position < 0) {
                return Outcome.NOT_FOUND;
            }
            long word = table.atomicWord(position);
            int head = key.head(directory.heads().size());
            long current = AtomicWord.current(word);
            if (objects.isComplete(head, current, key.bytes())) {
                return Outcome.COMPLETE;
            }
            long target = newestComplete(head, key, word, current, true);
            if (target == AtomicWord.NONE) {
                table.remove(position);
                stats.removedEntries.increment();
                return Outcome.REMOVED;
            }
            table.updateAtomicWord(position, AtomicWord.withCurrent(word, target));
            stats.rollbacks.increment();
            return Outcome.ROLLED_BACK;
        } finally {
            reservations.drop(key);
        }
    }

    /**
     * The newest complete version of {@code key} other than (and older than) {@code torn}: the word's previous, then
     * the words before each pending flip newest first, then (if {@code scanLog} and the records do not reach back to
     * the key's creation) the head's log. {@code torn} itself is tried first when it is the word's current and
     * {@code scanLog} is false (a GET wants the newest complete version, whichever it is).
     */
    private long newestComplete(int head, Key key, long word, long torn, boolean scanLog) {
        MemorySegment k = key.bytes();
        if (!scanLog && objects.isComplete(head, torn, k)) {
            return torn;
        }
        if (objects.isComplete(head, AtomicWord.previous(word), k)) {
            return AtomicWord.previous(word);
        }
        List<Reservation> records = reservations.of(key);
        for (int i = records.size() - 1; i >= 0; i--) {
            long before = records.get(i).wordBefore();
            for (long candidate : new long[] {AtomicWord.current(before), AtomicWord.previous(before)}) {
                if (candidate != torn && objects.isComplete(head, candidate, k)) {
                    return candidate;
                }
            }
        }
        boolean createdByARecord = !records.isEmpty() && records.getFirst().wordBefore() == 0;
        if (!scanLog || createdByARecord) {
            return AtomicWord.NONE;
        }
        return objects.newestCompleteBefore(head, k, torn);
    }

    private int find(Key key) {
        MemorySegment k = key.bytes();
        List<Reservation> pending = reservations.of(key);
        return table.lookup(key.hash(), (position, word, head) -> owns(head, word, k, pending));
    }

    private boolean owns(int head, long word, MemorySegment key, List<Reservation> pending) {
        long current = AtomicWord.current(word);
        ObjectCheck check = objects.check(head, current, key);
        if (check.isValid()) {
            return true;
        }
        if (check == ObjectCheck.KEY_MISMATCH) {
            return false;
        }
        for (Reservation r : pending) {
            if (r.head() == head && LogAddress.unitsForBytes(r.chainOffset()) == current) {
                return true;
            }
        }
        return objects.isComplete(head, AtomicWord.previous(word), key);
    }

    /** Number of keys (entries) in the table. */
    long keys() {
        return table.count();
    }

    @Override
    public void close() {
        lock.lock();
        try {
            directory.close();
        } finally {
            lock.unlock();
        }
    }
}
