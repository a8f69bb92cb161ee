package io.erda.server.store;

import io.erda.core.LogObjects;
import io.erda.core.PmDirectory;
import io.erda.core.log.ChainPosition;
import io.erda.core.log.LogHead;
import io.erda.core.table.HopscotchTable;
import io.erda.core.table.TableFullException;
import io.erda.protocol.RepairHintReply.Outcome;
import io.erda.protocol.WireStatus;
import io.erda.protocol.memory.AtomicWord;
import io.erda.protocol.memory.Key;
import io.erda.protocol.memory.LogAddress;
import io.erda.protocol.memory.ObjectFlyweight;
import io.erda.protocol.memory.ObjectLayout;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.concurrent.locks.ReentrantLock;

/**
 * The store a server serves: the one place where the server changes the table and the logs, under one lock (two
 * cores; the work under it is a few stores and a persist). Words change only by CAS (docs/one-sided-put.md,
 * [word-cas]): the lock orders the server's writers, not clients' one-sided CASes. Reservations are leases
 * (docs/ARCHITECTURE.md, [leases]) kept and settled by {@link Leases}; {@link KeyEntries} finds a key's entry.
 *
 * <p><b>Invariant.</b> While a key has pending reservations, its entry's current offset is the newest of them: every
 * flip adds a record, and a rollback settles (drops) all records of the key. So the records' words-before-flip
 * chain back, newest to oldest, through every version a rollback might need ([last-complete-version]).
 */
public final class Store implements AutoCloseable {
    /** Told, under the store lock, when a reservation made a head's chain grow (register it, bump the head array). */
    public interface ChainListener {
        void chainGrew(int head);
    }

    /** Where a reservation lies. */
    public record Reserved(int head, long chainOffset, int objectLength, int regionIndex, long offsetInRegion) {
    }

    private final PmDirectory directory;
    private final HopscotchTable table;
    private final LogObjects objects;
    private final ReentrantLock lock = new ReentrantLock();
    private final KeyEntries entries;
    private final Leases leases;
    private final StoreStats stats;
    private final Recovery.Summary recovery;
    private ChainListener chainListener = head -> { };
    /** Leased log blocks of one-sided mode (guarded by the store lock). */
    private final Blocks blocks = new Blocks();
    /** Bytes of a block ({@link #useOneSidedPuts}); 0 in reserve mode, where a PUT of an existing key flips its word. */
    private volatile int blockLength;
    /**
     * Makes each head's next log region in the background before a reservation needs it (core's
     * {@code LogHead.prepareAhead}): making one under the store lock stalls every PUT for milliseconds. Its thread is
     * started with the store, so that no PUT starts it (ThreadPoolExecutor.addWorker) and runs that cold path.
     */
    private final java.util.concurrent.ThreadPoolExecutor regionPreparer = new java.util.concurrent.ThreadPoolExecutor(1, 1,
            0, java.util.concurrent.TimeUnit.MILLISECONDS, new java.util.concurrent.LinkedBlockingQueue<>(),
            r -> Thread.ofPlatform().daemon().name("erda-region-preparer").unstarted(r));

    private Store(PmDirectory directory, long leaseNanos, StoreStats stats, Recovery.Summary recovery) {
        this.directory = directory;
        this.table = directory.table();
        this.objects = new LogObjects(directory);
        Reservations reservations = new Reservations();
        this.entries = new KeyEntries(table, objects, reservations);
        this.leases = new Leases(lock, directory, objects, reservations, entries, stats, leaseNanos);
        this.stats = stats;
        this.recovery = recovery;
        regionPreparer.prestartAllCoreThreads();
        directory.heads().forEach(head -> head.prepareAhead(regionPreparer));
    }

    /**
     * The store of a PM directory just created or reopened (its tails from the high-water marks), after
     * {@link Recovery}; {@code lease} is how long a reservation belongs to its client. The directory is closed if
     * recovery fails.
     */
    public static Store open(PmDirectory directory, java.time.Duration lease, StoreStats stats) {
        try {
            Recovery.Summary summary = new Recovery(directory).run();
            return new Store(directory, lease.toNanos(), stats, summary);
        } catch (RuntimeException e) {
            directory.close();
            throw e;
        }
    }

    /**
     * Switches the store to one-sided mode before it serves (docs/one-sided-put.md): updates of existing keys are
     * published by the client's CAS on the word, into blocks of {@code blockLength} bytes (capped at the largest object a
     * segment holds) that {@link #grantBlock} leases; {@link #reserve} then only inserts absent keys.
     */
    public void useOneSidedPuts(long blockLength) {
        if (blockLength < ObjectLayout.ALIGNMENT || blockLength % ObjectLayout.ALIGNMENT != 0) {
            throw new IllegalArgumentException("block size " + blockLength + " is not a positive multiple of "
                    + ObjectLayout.ALIGNMENT);
        }
        this.blockLength = (int) Math.min(blockLength, maxObjectLength());
    }

    /** Whether updates of existing keys are published by the client's CAS ({@link #useOneSidedPuts}). */
    public boolean oneSided() {
        return blockLength > 0;
    }

    /**
     * Grants a leased block of {@code head}'s write chain for one-sided updates: at least {@code minLength} bytes (the
     * block size, or one object larger than it), in one segment, at the tail, so the high-water mark persisted by
     * the reservation makes it part of the log. Its bytes stay zero until the client writes objects into them.
     */
    public Reserved grantBlock(int head, long minLength) {
        if (!oneSided()) {
            throw new RequestException(WireStatus.UNSUPPORTED, "BLOCK needs a server started with --put one-sided;"
                    + " this one publishes updates with reservations (--put reserve)");
        }
        int heads = directory.heads().size();
        if (head < 0 || head >= heads) {
            throw new RequestException(WireStatus.UNKNOWN_ADDRESS, "head " + head + " outside [0, " + heads + ")");
        }
        long length = ObjectLayout.align(Math.max(blockLength, minLength));
        if (length > maxObjectLength()) {
            throw new RequestException(WireStatus.VALUE_TOO_LARGE, "block of " + minLength + " bytes exceeds the"
                    + " segment limit " + maxObjectLength());
        }
        LogHead log = directory.head(head);
        lock.lock();
        try {
            long chainOffset = reserveTail(log, length);
            long now = System.nanoTime();
            blocks.expire(now);
            blocks.add(new Blocks.Block(head, chainOffset, now, now + leases.leaseNanos(), log.writeChain()));
            stats.blocksGranted.increment(); // not in bytesReserved: what a client writes into a block is its own count
            return reserved(log, chainOffset, length);
        } finally {
            lock.unlock();
        }
    }

    /**
     * The cleaner's wait once a head's writes go to its new chain: nanoseconds until the last lease of a block of
     * {@code head} in another chain (the one to be retired) granted before {@code grantedBeforeNanos}
     * ({@link System#nanoTime()}) ends, 0 if none may still be written.
     */
    public long blocksWaitNanos(int head, long grantedBeforeNanos) {
        lock.lock();
        try {
            long now = System.nanoTime();
            return blocks.lastDeadline(head, directory.head(head).writeChain(), grantedBeforeNanos, now) - now;
        } finally {
            lock.unlock();
        }
    }

    /**
     * A client gives back the block of {@code head} at {@code chainOffset} (BLOCK_RETURN): it publishes nothing more
     * from it, so a cleaning need not wait out its lease. Giving back a block whose lease already ended is no error.
     */
    public void returnBlock(int head, long chainOffset) {
        if (!oneSided()) {
            throw new RequestException(WireStatus.UNSUPPORTED, "BLOCK_RETURN needs a server started with --put"
                    + " one-sided");
        }
        lock.lock();
        try {
            if (blocks.giveBack(head, chainOffset, System.nanoTime())) {
                stats.blocksReturned.increment();
            }
        } finally {
            lock.unlock();
        }
    }

    /** Blocks whose lease may still run. */
    public int liveBlocks() {
        lock.lock();
        try {
            return blocks.live(System.nanoTime());
        } finally {
            lock.unlock();
        }
    }

    public void onChainGrowth(ChainListener listener) {
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

    public long leaseNanos() {
        return leases.leaseNanos();
    }

    /** Largest padded object a reservation can hold (a segment minus its header). */
    long maxObjectLength() {
        return directory.geometry().log().maxObjectLength();
    }

    /** Largest value with a 1-byte key, for clients sizing buffers (the exact limit depends on the key length). */
    public int maxValueLength() {
        return (int) Math.min(Integer.MAX_VALUE, maxObjectLength() - ObjectLayout.HEADER_LENGTH - 1);
    }

    // ------------------------------------------------------------------ PUT / DELETE (paper §3.3, §4.3)

    /**
     * Reserves room for an object (a tombstone when {@code delete}) at the tail of the key's head, flips the key's
     * entry to it (or inserts one) with one persisted 8-byte store, and records the lease.
     */
    public Reserved reserve(MemorySegment keyBytes, int valueLength, boolean delete) {
        long objectLength = checkedObjectLength(keyBytes.byteSize(), valueLength);
        Key key = Key.copyOf(keyBytes);
        int head = key.head(directory.heads().size());
        LogHead log = directory.head(head);
        lock.lock();
        try {
            int position = entries.find(key);
            if (position < 0 && delete) {
                throw new RequestException(WireStatus.NOT_FOUND, "DELETE of a key that does not exist");
            }
            if (position >= 0 && oneSided()) {
                // a word of an existing key names only complete objects here: no flip to one not written yet
                throw new RequestException(WireStatus.PUBLISH_BY_CAS, (delete ? "DELETE" : "PUT") + " of a key that"
                        + " exists: this server publishes updates by the client's CAS (--put one-sided)");
            }
            long chainOffset = reserveTail(log, objectLength);
            long before = flip(key, position, head, LogAddress.unitsForBytes(chainOffset));
            long deadline = System.nanoTime() + leases.leaseNanos();
            leases.add(new Reservation(key, head, chainOffset, (int) objectLength, deadline, before));
            (delete ? stats.deletes : stats.puts).increment();
            stats.bytesReserved.add(objectLength);
            return reserved(log, chainOffset, objectLength);
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
    public boolean apply(MemorySegment keyBytes, MemorySegment value, boolean delete) {
        long objectLength = checkedObjectLength(keyBytes.byteSize(), delete ? 0 : value.byteSize());
        Key key = Key.copyOf(keyBytes);
        int head = key.head(directory.heads().size());
        LogHead log = directory.head(head);
        lock.lock();
        try {
            int position = entries.find(key);
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

    /** Where {@code length} bytes reserved at {@code chainOffset} of {@code log} lie, as the reply names them. */
    private static Reserved reserved(LogHead log, long chainOffset, long length) {
        long regionSize = log.geometry().regionSize(); // no ChainPosition per PUT: the reply needs two numbers
        return new Reserved(log.headId(), chainOffset, (int) length, LogAddress.regionIndexForOffset(chainOffset,
                regionSize), LogAddress.offsetInRegion(chainOffset, regionSize));
    }

    /** Reserves at the head's tail (under the store lock), telling the chain listener if the chain grew. */
    private long reserveTail(LogHead log, long objectLength) {
        // not regionCount(): a cleaning retiring regions of this head meanwhile (without the store lock) could hide the
        // region this reservation added, which would then be handed out unregistered (one-sided mode's BLOCKs, which
        // often take a region each, met it under cleaning: the reply found no registration for the block's region)
        long appendedBefore = log.regionsAppended();
        long chainOffset;
        try {
            chainOffset = log.reserve(objectLength);
        } catch (IllegalStateException chainFull) {
            throw new RequestException(WireStatus.LOG_FULL, chainFull.getMessage());
        }
        if (log.regionsAppended() != appendedBefore) {
            chainListener.chainGrew(log.headId());
        }
        return chainOffset;
    }

    /**
     * Points the key's entry at {@code units} (the old current becomes previous) with one persisted 8-byte CAS,
     * or inserts an entry when {@code position} is negative; returns the word before (0 for an insert). A CAS lost to
     * a client's one-sided update is retried from the word that update left, so the client's version becomes previous.
     */
    private long flip(Key key, int position, int head, long units) {
        if (position >= 0) {
            for (;;) {
                long before = table.atomicWord(position);
                if (table.compareAndSetAtomicWord(position, before, AtomicWord.withNewVersion(before, units))) {
                    return before;
                }
            }
        }
        try {
            table.insert(key.hash(), head, AtomicWord.initial(units));
        } catch (TableFullException full) {
            throw new RequestException(WireStatus.TABLE_FULL, full.getMessage());
        }
        return 0;
    }

    /** Refuses (naming value and limit) a pair {@link #apply} could not store: checked before a baseline acknowledges. */
    public void requireAppliable(long keyLength, long valueLength) {
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
    public byte[] get(MemorySegment keyBytes) {
        checkedObjectLength(keyBytes.byteSize(), 0);
        Key key = Key.copyOf(keyBytes);
        lock.lock();
        try {
            stats.getsTwoSided.increment();
            int position = entries.find(key);
            if (position < 0) {
                return null;
            }
            long word = table.atomicWord(position);
            int head = key.head(directory.heads().size());
            long units = entries.newestComplete(head, key, word, AtomicWord.current(word), false);
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

    // ------------------------------------------------------------------ filling a cluster backup ([cluster])

    /**
     * [cluster], a primary filling a new backup: the keys of the entries whose key hash {@code acceptHash} takes
     * (a shard's), each read from the entry's current object, else its previous one; an entry with neither complete
     * (a new key whose first reservation is still pending) is left out. Read under the store lock a chunk of home
     * buckets at a time, so PUTs go on meanwhile; entries are visited by home bucket, which a hopscotch move keeps, so
     * every key that has an entry when the listing passes its home is listed once. Keys inserted later are the
     * caller's to cover (a filling primary forwards them).
     */
    public java.util.List<byte[]> keys(java.util.function.LongPredicate acceptHash) {
        java.util.List<byte[]> keys = new java.util.ArrayList<>();
        long capacity = table.geometry().capacity();
        ObjectFlyweight object = new ObjectFlyweight();
        for (long start = 0; start < capacity; start += KEY_LIST_CHUNK) {
            long from = start;
            long to = start + KEY_LIST_CHUNK;
            locked(() -> {
                table.forEach(from, to, (position, word, fingerprint, head) -> {
                    for (long units : new long[] {AtomicWord.current(word), AtomicWord.previous(word)}) {
                        if (objects.wrap(head, units, object, null).isValid()) {
                            byte[] key = object.key().toArray(ValueLayout.JAVA_BYTE);
                            if (acceptHash.test(io.erda.protocol.memory.KeyHash.hash(key))) {
                                keys.add(key);
                            }
                            return;
                        }
                    }
                });
                return null;
            });
            Leases.letWaitersIn(lock); // PUTs go on between chunks
        }
        return keys;
    }

    /** Buckets {@link #keys} reads per hold of the store lock. */
    private static final long KEY_LIST_CHUNK = 4096;

    /**
     * [cluster]: whether every pending reservation of {@code keyBytes} issued before {@code issuedBeforeNanos} (a
     * {@link System#nanoTime()}) has its object complete; true when none is pending. A primary filling a backup
     * copies a key's newest complete value only once this holds, so a PUT reserved before the fill began and
     * acknowledged after the copy cannot be missing from the backup.
     */
    public boolean settledBefore(MemorySegment keyBytes, long issuedBeforeNanos) {
        Key key = Key.copyOf(keyBytes);
        return locked(() -> {
            for (Reservation r : leases.of(key)) {
                if (r.deadline() - leases.leaseNanos() - issuedBeforeNanos < 0 && !leases.complete(r)) {
                    return false;
                }
            }
            return true;
        });
    }

    // ------------------------------------------------------------------ FLUSH (persistence method server-flush)

    /** Makes a range a client wrote durable; it must lie inside the head's reserved log and one region. */
    public void flush(int head, long chainOffset, int length) {
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
     * A client's hint that {@code key}'s newest object looks torn: checked like any key, then settled by
     * {@link Leases#repairHint} if no lease of it is running.
     */
    public Outcome repairHint(MemorySegment keyBytes) {
        checkedObjectLength(keyBytes.byteSize(), 0);
        return leases.repairHint(Key.copyOf(keyBytes));
    }

    /** The reservations and their settlement (the lease validator's and the cleaner's side of the store). */
    Leases leases() {
        return leases;
    }

    /**
     * Runs {@code action} under the store lock (the log cleaner's changes to table and heads), then lets the request
     * threads queued on the lock meanwhile take it ({@link Leases#letWaitersIn}) before the caller can take it back.
     * The cleaner takes it once per object it copies and per chunk of the table it switches, back to back; the lock
     * is not fair, so without the hand-off it keeps the lock while the woken worker is still being scheduled, chunk
     * after chunk, and a PUT during cleaning waits for hundreds of milliseconds.
     */
    <T> T locked(java.util.function.Supplier<T> action) {
        lock.lock();
        try {
            return action.get();
        } finally {
            lock.unlock();
            if (!lock.isHeldByCurrentThread()) { // not from inside an outer hold
                Leases.letWaitersIn(lock);
            }
        }
    }

    /** Number of keys (entries) in the table. */
    public long keys() {
        return table.count();
    }

    /** Keys with reservations pending (not yet settled). */
    public int pendingKeys() {
        return leases.pendingKeys();
    }

    @Override
    public void close() {
        lock.lock();
        try {
            directory.close(); // waits for a spare being made and deletes it
        } finally {
            lock.unlock();
            regionPreparer.shutdown();
        }
    }
}
