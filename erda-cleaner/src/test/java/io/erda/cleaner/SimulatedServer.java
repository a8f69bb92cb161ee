package io.erda.cleaner;

import io.erda.core.PmDirectory;
import io.erda.core.log.ChainPosition;
import io.erda.core.log.LogHead;
import io.erda.core.pm.PmRegion;
import io.erda.core.table.HopscotchTable;
import io.erda.protocol.memory.AtomicWord;
import io.erda.protocol.memory.KeyHash;
import io.erda.protocol.memory.LogAddress;
import io.erda.protocol.memory.ObjectFlyweight;
import io.erda.protocol.memory.ObjectLayout;
import java.lang.foreign.MemorySegment;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.ConcurrentSkipListMap;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.LongPredicate;
import java.util.function.Supplier;

/**
 * Stands in for the server at the core level: the PUT path the server uses (locked: find the entry,
 * reserve, flip or insert; then the "client" writes the object), a one-sided GET (no lock: word, then
 * current else previous object, key and CRC checked) and leases reduced to "pending until written".
 *
 * <p>Values are {@code version (8 bytes) | filler derived from key and version}, so a reader can tell
 * a torn or mixed value and how new it is. Versions are taken under the lock, so version order is
 * flip order.
 */
final class SimulatedServer implements CleaningHost {
    /** Thrown by a write that a simulated crash stopped between reservation and WRITE. */
    static final class Crashed extends RuntimeException {
        Crashed() {
            super("simulated crash", null, false, false);
        }
    }

    final PmDirectory store;
    final HopscotchTable table;
    final ReentrantLock lock = new ReentrantLock();
    private final AtomicLong versions = new AtomicLong();
    /**
     * Pending reservations (reserved and flipped, not yet written): chain offset (with head in the high bits) -> key
     * and issue time. Added before the flip and removed after the write, so whoever reads a word finds its current
     * offset here or its object complete: checked in that order (pending first), as the server's {@code KeyEntries}
     * does.
     */
    private final ConcurrentSkipListMap<Long, Pending> pending = new ConcurrentSkipListMap<>();
    final AtomicReference<Boolean> crashed = new AtomicReference<>(false);
    volatile int headStateChanges;
    volatile int regionsAdded;
    /** Run once where the cleaner next reports a copy written, between the copy and its record (null: nothing). */
    volatile Runnable onCopyWritten;

    SimulatedServer(PmDirectory store) {
        this.store = store;
        this.table = store.table();
    }

    // ------------------------------------------------------------------ CleaningHost

    @Override
    public <T> T locked(Supplier<T> action) {
        lock.lock();
        try {
            return action.get();
        } finally {
            lock.unlock();
        }
    }

    @Override
    public void headStateChanged(int headId, boolean cleaning) {
        headStateChanges++;
    }

    @Override
    public void regionsAdded(int headId) {
        regionsAdded++;
    }

    @Override
    public void retiring(int headId, List<PmRegion> regions) {
    }

    @Override
    public void bytesCopied(long bytes) {
        Runnable action = onCopyWritten;
        onCopyWritten = null;
        if (action != null) {
            action.run();
        }
    }

    private record Pending(String key, long issuedNanos) {
    }

    @Override
    public void awaitSettled(int headId, long issuedBeforeNanos) throws InterruptedException {
        while (pending.values().stream().anyMatch(p -> p.issuedNanos() < issuedBeforeNanos)) {
            Thread.sleep(1);
        }
    }

    /** None while serving: leases here are reduced to "pending until written" and never run out. */
    @Override
    public long rollbacks(int headId) {
        return 0;
    }

    @Override
    public boolean rollbackMayRestore(int headId, LongPredicate word) {
        return false;
    }

    @Override
    public Duration maxRoundTrip() {
        return Duration.ofMillis(2);
    }

    // ------------------------------------------------------------------ the store's operations

    static int headOf(String key, int heads) {
        return KeyHash.headId(KeyHash.hash(bytes(key)), heads);
    }

    /** PUT (or DELETE when {@code value} is null); returns the version, or -1 for a DELETE of an absent key. */
    long put(String key, boolean delete) {
        byte[] k = bytes(key);
        long hash = KeyHash.hash(k);
        int headId = KeyHash.headId(hash, store.heads().size());
        LogHead head = store.head(headId);
        long version;
        long offset;
        long length;
        lock.lock();
        try {
            int position = find(key, hash, headId);
            if (position < 0 && delete) {
                return -1;
            }
            version = versions.incrementAndGet();
            length = ObjectLayout.length(k.length, delete ? 0 : valueLength(version));
            offset = head.reserve(length);
            long units = LogAddress.unitsForBytes(offset);
            pending.put(pendingKey(headId, offset), new Pending(key, System.nanoTime())); // before any reader sees the flip
            if (position >= 0) {
                long before = table.atomicWord(position);
                won(table.compareAndSetAtomicWord(position, before, AtomicWord.withNewVersion(before, units)));
            } else {
                table.insert(hash, headId, AtomicWord.initial(units));
            }
        } finally {
            lock.unlock();
        }
        try {
            if (crashed.get()) {
                throw new Crashed(); // reserved and flipped, never written: a torn PUT
            }
            MemorySegment target = head.slice(offset, length);
            ObjectLayout.encode(target, 0, MemorySegment.ofArray(k),
                    MemorySegment.ofArray(delete ? new byte[0] : value(key, version)), delete);
            ChainPosition at = head.resolve(offset);
            at.region().recordWrite(at.offsetInRegion(), length);
            at.region().persist(at.offsetInRegion(), length);
        } finally {
            if (!crashed.get()) {
                pending.remove(pendingKey(headId, offset)); // after the write: the object is complete once it is gone
            }
        }
        return version;
    }

    /**
     * One-sided style GET without the lock: the version read, 0 if the key is absent or deleted, or
     * -1 when neither version is complete yet (caller retries). Throws on a torn or mixed value.
     */
    long get(String key) {
        byte[] k = bytes(key);
        long hash = KeyHash.hash(k);
        int headId = KeyHash.headId(hash, store.heads().size());
        LogHead head = store.head(headId);
        MemorySegment expected = MemorySegment.ofArray(k);
        ObjectFlyweight object = new ObjectFlyweight();
        long[] matched = new long[1];
        int position = table.lookup(hash, (p, word, h) -> {
            matched[0] = word;
            return h == headId && owns(key, head, word, expected, object);
        });
        if (position < 0) {
            return 0;
        }
        // the word the entry had when it was matched, as a client uses the window it READ: read again, the bucket
        // may hold another entry by now (a removal and an insert), whose offsets mean nothing in this key's head
        long word = matched[0];
        for (long units : new long[] {AtomicWord.current(word), AtomicWord.previous(word)}) {
            if (holds(head, units, expected, object)) {
                if (object.isTombstone()) {
                    return 0;
                }
                return checkedVersion(key, object.value());
            }
        }
        return -1;
    }

    /** Bytes a simulated one-sided READ of an object copies. */
    private static final int READ_LENGTH = 4096;

    private static boolean holds(LogHead head, long units, MemorySegment key, ObjectFlyweight object) {
        long offset = LogAddress.bytesForUnits(units);
        if (units == AtomicWord.NONE || !head.isMapped(offset, 0)) {
            return false;
        }
        try {
            ChainPosition at = head.resolve(offset);
            MemorySegment data = at.region().data();
            // as a client's READ: copy, then check the copy. Checked in place, a region retired and zeroed between
            // the check and the reads of the value (a reader held up past maxRoundTrip on a loaded host) gave a
            // zero-length value of a "valid" object. This test's objects are far below READ_LENGTH.
            long length = Math.min(READ_LENGTH, data.byteSize() - at.offsetInRegion());
            MemorySegment copy = MemorySegment.ofArray(new byte[(int) length]);
            MemorySegment.copy(data, at.offsetInRegion(), copy, 0, length);
            return object.wrap(copy, 0).validate(length, key).isValid();
        } catch (IllegalArgumentException | IllegalStateException retired) {
            return false; // the region was retired under this stale word: a client's READ would fail and retry
        }
    }

    /** Server-side lookup (locked): the key's entry position or -1. */
    private int find(String key, long hash, int headId) {
        LogHead head = store.head(headId);
        MemorySegment expected = MemorySegment.ofArray(bytes(key));
        ObjectFlyweight object = new ObjectFlyweight();
        return table.lookup(hash, (p, word, h) -> h == headId && owns(key, head, word, expected, object));
    }

    /**
     * Whether an entry of {@code head} with {@code word} is {@code key}'s: its current offset is a pending
     * reservation of the key, or its current or previous object is complete with the key. The pending check comes
     * first: a write completing between an object check and a later pending check would be seen as neither (its
     * object read before it was written, its reservation gone after), and a PUT would insert a second entry for
     * the key (a GET would report it absent).
     */
    private boolean owns(String key, LogHead head, long word, MemorySegment expected, ObjectFlyweight object) {
        Pending p = pending.get(pendingKey(head.headId(), LogAddress.bytesForUnits(AtomicWord.current(word))));
        return p != null && p.key().equals(key)
                || holds(head, AtomicWord.current(word), expected, object)
                || holds(head, AtomicWord.previous(word), expected, object);
    }

    /**
     * [recovery] after a restart: every entry whose current object is incomplete rolls back to its
     * previous version, or goes if it has none. Returns the entries rolled back.
     */
    int rollBackIncomplete() {
        int[] rolled = {0};
        ObjectFlyweight object = new ObjectFlyweight();
        List<long[]> entries = new java.util.ArrayList<>();
        table.forEach((position, word, fingerprint, headId) -> entries.add(new long[] {position, word, headId}));
        for (long[] e : entries) {
            LogHead head = store.head((int) e[2]);
            if (!holds(head, AtomicWord.current(e[1]), null, object)) {
                rolled[0]++;
                if (holds(head, AtomicWord.previous(e[1]), null, object)) {
                    won(table.compareAndSetAtomicWord((int) e[0], e[1], AtomicWord.withCurrent(e[1], AtomicWord.previous(e[1]))));
                } else {
                    won(table.remove((int) e[0], e[1]));
                }
            }
        }
        return rolled[0];
    }

    /** The simulated server is the only writer of words: none of its CASes can lose. */
    private static void won(boolean cas) {
        if (!cas) {
            throw new IllegalStateException("a CAS of the simulated server lost, but it is the only writer of words");
        }
    }

    private static long pendingKey(int headId, long offset) {
        return ((long) headId << 40) | offset;
    }

    static byte[] bytes(String key) {
        return key.getBytes(StandardCharsets.UTF_8);
    }

    static int valueLength(long version) {
        return 8 + (int) (version * 37 % 200);
    }

    static byte[] value(String key, long version) {
        byte[] v = new byte[valueLength(version)];
        ByteBuffer.wrap(v).putLong(version);
        int seed = key.hashCode() * 31 + (int) version;
        for (int i = 8; i < v.length; i++) {
            v[i] = (byte) (seed + i);
        }
        return v;
    }

    private static long checkedVersion(String key, MemorySegment value) {
        byte[] v = value.toArray(java.lang.foreign.ValueLayout.JAVA_BYTE);
        long version = ByteBuffer.wrap(v).getLong();
        if (!java.util.Arrays.equals(v, value(key, version))) {
            throw new AssertionError("torn or mixed value for " + key + " version " + version);
        }
        return version;
    }
}
