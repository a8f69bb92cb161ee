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
 * needed to find the last complete version. Not thread-safe: the store's lock guards it.
 */
final class Reservations {
    private final Map<Key, ArrayDeque<Reservation>> byKey = new HashMap<>();
    private final ArrayDeque<Reservation> byDeadline = new ArrayDeque<>();

    void add(Reservation r) {
        byKey.computeIfAbsent(r.key(), k -> new ArrayDeque<>()).addLast(r);
        byDeadline.addLast(r);
    }

    /** The key's pending reservations, oldest first (empty if none). */
    List<Reservation> of(Key key) {
        ArrayDeque<Reservation> records = byKey.get(key);
        return records == null ? List.of() : List.copyOf(records);
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
