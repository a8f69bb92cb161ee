package io.erda.server;

import io.erda.core.hash.Key;
import java.util.ArrayDeque;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * The pending reservations of a store, per key in reservation order and all together in deadline order (every
 * lease has the same length, so reservation order is deadline order and a FIFO is a priority queue).
 *
 * <p>A key's records are settled together when its newest one expires: until then an older torn one may still be
 * needed to find the last complete version. A key updated more often than once a lease would so keep records
 * forever (a hot key of a zipfian workload held hundreds, copied and scanned by every PUT of it); {@link #add} drops
 * those older than the key's newest complete one instead ({@link #PRUNE_AT}). Not thread-safe: the store's lock
 * guards it.
 */
final class Reservations {
    /**
     * A key's record count at which {@link #add} looks for a complete one to drop the older ones behind: one object
     * check (a CRC of the object) per this many PUTs of a key that is updated faster than its leases expire.
     */
    static final int PRUNE_AT = 8;
    /** Records {@link #add} checks, newest first, before it gives up until the key's next PUT. */
    private static final int PRUNE_CHECKS = 2;

    private final Map<Key, ArrayDeque<Reservation>> byKey = new HashMap<>();
    private final ArrayDeque<Reservation> byDeadline = new ArrayDeque<>();

    /**
     * Records {@code r}; if its key has {@link #PRUNE_AT} records, drops those older than the newest one (before
     * {@code r}) whose object {@code complete} says is complete. That one stays: the next record's word-before points
     * at it, so a later torn version still rolls back to it ([last-complete-version]), and a pending reservation is
     * how a PUT finds its key's entry without reading the object ({@link KeyEntries}). An older record is no longer
     * needed: no rollback goes past a complete version, and the cleaner and a filling primary already treat a key
     * whose newer version is complete as settled.
     */
    void add(Reservation r, java.util.function.Predicate<Reservation> complete) {
        ArrayDeque<Reservation> records = byKey.computeIfAbsent(r.key(), k -> new ArrayDeque<>());
        records.addLast(r);
        byDeadline.addLast(r);
        if (records.size() >= PRUNE_AT) {
            prune(records, complete);
        }
    }

    private static void prune(ArrayDeque<Reservation> records, java.util.function.Predicate<Reservation> complete) {
        var newestFirst = records.descendingIterator();
        newestFirst.next(); // the one just added: not written yet
        for (int checks = 0; checks < PRUNE_CHECKS && newestFirst.hasNext(); checks++) {
            Reservation candidate = newestFirst.next();
            if (complete.test(candidate)) {
                while (records.peekFirst() != candidate) {
                    records.pollFirst(); // its byDeadline entry stays: pollEarliest skips a record not its key's newest
                }
                return;
            }
        }
    }

    /**
     * The key's pending reservations, oldest first (empty if none): the live records, for reading under the store
     * lock only (no copy per PUT).
     */
    java.util.SequencedCollection<Reservation> of(Key key) {
        ArrayDeque<Reservation> records = byKey.get(key);
        return records == null ? List.of() : records;
    }

    /** The key's newest pending reservation, or null. */
    Reservation newest(Key key) {
        ArrayDeque<Reservation> records = byKey.get(key);
        return records == null ? null : records.peekLast();
    }

    void drop(Key key) {
        byKey.remove(key);
    }

    /** The earliest deadline still queued (possibly of a dropped record), or null. */
    Reservation earliest() {
        return byDeadline.peekFirst();
    }

    /** Removes {@link #earliest()}; returns it if it is still its key's newest record (the one to settle), else null. */
    Reservation pollEarliest() {
        Reservation r = byDeadline.pollFirst();
        return r != null && newest(r.key()) == r ? r : null;
    }

    /** For every key with pending records: its oldest and newest record. */
    List<Reservation[]> oldestAndNewest() {
        return byKey.values().stream().map(records -> new Reservation[] {records.peekFirst(), records.peekLast()}).toList();
    }

    int keys() {
        return byKey.size();
    }
}
