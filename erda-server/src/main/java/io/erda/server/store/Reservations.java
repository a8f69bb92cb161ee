package io.erda.server.store;

import io.erda.protocol.memory.Key;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.Iterator;
import java.util.List;
import java.util.SequencedCollection;
import java.util.function.Predicate;

/**
 * The pending reservations of a store, per key in reservation order and all together in deadline order (every
 * lease has the same length, so reservation order is deadline order and a FIFO is a priority queue).
 *
 * <p>A key's records are settled together when its newest one expires: until then an older torn one may still be
 * needed to find the last complete version. A key updated more often than once a lease would so keep records
 * forever (a hot key of a zipfian workload held hundreds, copied and scanned by every PUT of it); {@link #add} drops
 * those older than the key's newest complete one instead ({@link #PRUNE_AT}). Not thread-safe: the store's lock
 * guards it.
 *
 * <p><b>Growth.</b> A load keeps about a lease and a quarter of PUTs pending (190k at 150k PUTs/s), and a
 * {@link HashMap} that grows rehashes every entry in one call, under the store lock: milliseconds for one PUT. The
 * per-key records are therefore split over {@link #SHARDS} maps by key hash, so a growth rehashes a
 * 64th of them, and the maps' load factors differ ({@link #loadFactor}), so they do not all grow at one PUT. A key
 * with one pending record (nearly every key) maps to the record itself, a key with more to a deque of them: no deque
 * per PUT, which lives for a lease and which the collector would copy.
 */
final class Reservations {
    /** Maps the per-key records are split over (a power of two). */
    static final int SHARDS = 64;
    /**
     * A key's record count at which {@link #add} looks for a complete one to drop the older ones behind: one object
     * check (a CRC of the object) per this many PUTs of a key that is updated faster than its leases expire.
     */
    static final int PRUNE_AT = 8;
    /** Records {@link #add} checks, newest first, before it gives up until the key's next PUT. */
    private static final int PRUNE_CHECKS = 2;

    /** Per shard: key to its one {@link Reservation}, or to an {@code ArrayDeque<Reservation>} of several, oldest first. */
    private final List<HashMap<Key, Object>> byKey = new ArrayList<>(SHARDS);
    /** In linked chunks, not an ArrayDeque: a growth under the store lock would copy the whole queue ({@link ChunkedFifo}). */
    private final ChunkedFifo<Reservation> byDeadline = new ChunkedFifo<>();

    Reservations() {
        for (int i = 0; i < SHARDS; i++) {
            byKey.add(new HashMap<>(16, loadFactor(i)));
        }
    }

    /**
     * The load factor of map {@code shard}, spread evenly over (0.5, 1]: keys spread evenly over the maps, so with
     * one load factor every map would outgrow its table at the same pending count, and one PUT pay for all 64
     * rehashes (milliseconds). Spread, they grow one at a time, each at its own count.
     */
    static float loadFactor(int shard) {
        return 0.5f + 0.5f * (shard + 1) / SHARDS;
    }

    private HashMap<Key, Object> shard(Key key) {
        return byKey.get((int) (key.hash() >>> (Long.SIZE - Integer.numberOfTrailingZeros(SHARDS))));
    }

    /**
     * Records {@code r}; if its key then has {@link #PRUNE_AT} records, drops those older than the newest one (before
     * {@code r}) whose object {@code complete} says is complete. That one stays: the next record's word-before points
     * at it, so a later torn version still rolls back to it ([last-complete-version]), and a pending reservation is
     * how a PUT finds its key's entry without reading the object ({@link KeyEntries}). An older record is no longer
     * needed: no rollback goes past a complete version, and the cleaner and a filling primary already treat a key
     * whose newer version is complete as settled.
     */
    @SuppressWarnings("unchecked")
    void add(Reservation r, Predicate<Reservation> complete) {
        Object records = shard(r.key()).merge(r.key(), r, (present, added) -> {
            ArrayDeque<Reservation> several;
            if (present instanceof Reservation one) {
                several = new ArrayDeque<>(4);
                several.add(one);
            } else {
                several = (ArrayDeque<Reservation>) present;
            }
            several.peekLast().superseded();
            several.addLast((Reservation) added);
            return several;
        });
        byDeadline.addLast(r);
        if (records instanceof ArrayDeque<?> several && several.size() >= PRUNE_AT) {
            prune((ArrayDeque<Reservation>) several, complete);
        }
    }

    private static void prune(ArrayDeque<Reservation> records, Predicate<Reservation> complete) {
        Iterator<Reservation> newestFirst = records.descendingIterator();
        newestFirst.next(); // the one just added: not written yet
        for (int checks = 0; checks < PRUNE_CHECKS && newestFirst.hasNext(); checks++) {
            Reservation candidate = newestFirst.next();
            if (complete.test(candidate)) {
                while (records.peekFirst() != candidate) {
                    records.pollFirst(); // superseded already; its byDeadline entry stays: pollEarliest skips it
                }
                return;
            }
        }
    }

    /**
     * The key's pending reservations, oldest first (empty if none): the live records of a key with several, for
     * reading under the store lock only (no copy per PUT).
     */
    SequencedCollection<Reservation> of(Key key) {
        Object records = shard(key).get(key);
        return records == null ? List.of() : asCollection(records);
    }

    @SuppressWarnings("unchecked")
    private static SequencedCollection<Reservation> asCollection(Object records) {
        return records instanceof Reservation one ? List.of(one) : (ArrayDeque<Reservation>) records;
    }

    /** The key's newest pending reservation, or null. */
    Reservation newest(Key key) {
        return newestOf(shard(key).get(key));
    }

    @SuppressWarnings("unchecked")
    private static Reservation newestOf(Object records) {
        return records == null ? null
                : records instanceof Reservation one ? one : ((ArrayDeque<Reservation>) records).peekLast();
    }

    /** Drops the key's records (its newest one is no longer its newest: {@link Reservation#isNewest}). */
    void drop(Key key) {
        Object records = shard(key).remove(key);
        if (records != null) {
            newestOf(records).superseded();
        }
    }

    /** The earliest deadline still queued (possibly of a dropped record), or null. */
    Reservation earliest() {
        return byDeadline.peekFirst();
    }

    /**
     * Removes {@link #earliest()}; returns it if it is still its key's newest record (the one to settle), else null.
     * Told by the record's own bit, not by a lookup of its key ({@link Reservation}).
     */
    Reservation pollEarliest() {
        Reservation r = byDeadline.pollFirst();
        return r != null && r.isNewest() ? r : null;
    }

    /**
     * Whether {@code test} holds for some key of one shard ({@code 0 <= shard < SHARDS}; a key stays in its shard),
     * given the key's records oldest first, as {@link #of} gives them. A scan of every key goes shard by shard, so it
     * can release the store lock in between.
     */
    boolean anyKeyIn(int shard, Predicate<SequencedCollection<Reservation>> test) {
        for (Object records : byKey.get(shard).values()) {
            if (test.test(asCollection(records))) {
                return true;
            }
        }
        return false;
    }

    int keys() {
        int keys = 0;
        for (HashMap<Key, Object> shard : byKey) {
            keys += shard.size();
        }
        return keys;
    }
}
