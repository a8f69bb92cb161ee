package io.erda.server;

import io.erda.core.hash.Key;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;

/**
 * The pending reservations of a store, per key in reservation order and all together in deadline order (every
 * lease has the same length, so reservation order is deadline order and a FIFO is a priority queue).
 *
 * <p>A key's records are settled together when its newest one expires: until then an older torn one may still be
 * needed to find the last complete version. Not thread-safe: the store's lock guards it.
 *
 * <p><b>Growth.</b> A load keeps about a lease and a quarter of PUTs pending (190k at 150k PUTs/s), and a
 * {@link HashMap} that grows rehashes every entry in one call, under the store lock: 18 ms for one PUT in
 * scale-bench. The per-key records are therefore split over {@link #SHARDS} maps by key hash, so a growth rehashes a
 * 64th of them. A key with one pending record (nearly every key) maps to the record itself, a key with more to a
 * deque of them: no deque per PUT, which lives for a lease and which the collector would copy.
 */
final class Reservations {
    /** Maps the per-key records are split over (a power of two). */
    static final int SHARDS = 64;

    /** Per shard: key to its one {@link Reservation}, or to an {@code ArrayDeque<Reservation>} of several, oldest first. */
    private final List<HashMap<Key, Object>> byKey = new ArrayList<>(SHARDS);
    private final ArrayDeque<Reservation> byDeadline = new ArrayDeque<>();

    Reservations() {
        for (int i = 0; i < SHARDS; i++) {
            byKey.add(new HashMap<>());
        }
    }

    private HashMap<Key, Object> shard(Key key) {
        return byKey.get((int) (key.hash() >>> (Long.SIZE - Integer.numberOfTrailingZeros(SHARDS))));
    }

    @SuppressWarnings("unchecked")
    void add(Reservation r) {
        shard(r.key()).merge(r.key(), r, (present, added) -> {
            ArrayDeque<Reservation> records;
            if (present instanceof Reservation one) {
                records = new ArrayDeque<>(4);
                records.add(one);
            } else {
                records = (ArrayDeque<Reservation>) present;
            }
            records.addLast((Reservation) added);
            return records;
        });
        byDeadline.addLast(r);
    }

    /** The key's pending reservations, oldest first (empty if none). */
    @SuppressWarnings("unchecked")
    List<Reservation> of(Key key) {
        Object records = shard(key).get(key);
        if (records == null) {
            return List.of();
        }
        return records instanceof Reservation one ? List.of(one) : List.copyOf((ArrayDeque<Reservation>) records);
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

    @SuppressWarnings("unchecked")
    private static Reservation oldestOf(Object records) {
        return records instanceof Reservation one ? one : ((ArrayDeque<Reservation>) records).peekFirst();
    }

    void drop(Key key) {
        shard(key).remove(key);
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
        List<Reservation[]> pairs = new ArrayList<>();
        for (HashMap<Key, Object> shard : byKey) {
            for (Object records : shard.values()) {
                pairs.add(new Reservation[] {oldestOf(records), newestOf(records)});
            }
        }
        return pairs;
    }

    int keys() {
        int keys = 0;
        for (HashMap<Key, Object> shard : byKey) {
            keys += shard.size();
        }
        return keys;
    }
}
