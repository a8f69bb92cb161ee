package io.erda.fabric.emulated;

import java.util.ArrayList;
import java.util.Collection;
import java.util.List;

/**
 * A map from {@code int} keys (rkeys) to values for a lookup on every one-sided access: {@link #get} takes no lock
 * and allocates nothing (a {@code Map<Integer, V>} boxed every rkey above 127: three {@code Integer}s per shm WRITE,
 * a tenth of a PUT's garbage). Copy-on-write: {@link #put} and {@link #remove} (a region
 * registered or dropped, rare) build a new open-addressed table under a lock and publish it with one volatile write,
 * so a reader sees the table before or after a change, never a half-made one.
 *
 * @param <V> the value type (not null)
 */
public final class IntKeyMap<V> {
    /** Keys and values at the same index; a null value is an empty slot. Length a power of two, at most half full. */
    private record Slots(int[] keys, Object[] values, int size) {
        static final Slots EMPTY = new Slots(new int[2], new Object[2], 0);
    }

    private volatile Slots slots = Slots.EMPTY;

    /** The value of {@code key}, or null. */
    @SuppressWarnings("unchecked")
    public V get(int key) {
        Slots s = slots;
        int mask = s.keys.length - 1;
        for (int i = spread(key) & mask; ; i = (i + 1) & mask) {
            Object v = s.values[i];
            if (v == null || s.keys[i] == key) {
                return (V) v;
            }
        }
    }

    /** Maps {@code key} to {@code value}; returns the value it replaced, or null. */
    public synchronized V put(int key, V value) {
        if (value == null) {
            throw new NullPointerException("value of key " + key);
        }
        V old = get(key);
        List<Object> entries = entriesExcept(key, old != null);
        entries.add(key);
        entries.add(value);
        slots = build(entries);
        return old;
    }

    /**
     * Maps each of {@code values} to its key (replacing what a key had), in one new table: a region table built afresh
     * (the shm initiator's, when the target's exports change) copied the whole table once per entry with {@link #put}.
     */
    public synchronized void putAll(Collection<? extends V> values, java.util.function.ToIntFunction<? super V> keyOf) {
        java.util.Map<Integer, Object> all = new java.util.LinkedHashMap<>();
        Slots s = slots;
        for (int i = 0; i < s.keys.length; i++) {
            if (s.values[i] != null) {
                all.put(s.keys[i], s.values[i]);
            }
        }
        for (V value : values) {
            all.put(keyOf.applyAsInt(java.util.Objects.requireNonNull(value, "a value to put")), value);
        }
        List<Object> entries = new ArrayList<>(2 * all.size());
        all.forEach((key, value) -> {
            entries.add(key);
            entries.add(value);
        });
        slots = build(entries);
    }

    /** Removes every entry whose value {@code test} accepts, in one new table; returns the values removed. */
    public synchronized List<V> removeIf(java.util.function.Predicate<? super V> test) {
        List<V> removed = new ArrayList<>();
        List<Object> kept = new ArrayList<>();
        Slots s = slots;
        for (int i = 0; i < s.keys.length; i++) {
            @SuppressWarnings("unchecked")
            V v = (V) s.values[i];
            if (v != null && test.test(v)) {
                removed.add(v);
            } else if (v != null) {
                kept.add(s.keys[i]);
                kept.add(v);
            }
        }
        if (!removed.isEmpty()) {
            slots = build(kept);
        }
        return removed;
    }

    /** Removes {@code key}; returns its value, or null if it had none. */
    public synchronized V remove(int key) {
        V old = get(key);
        if (old != null) {
            slots = build(entriesExcept(key, true));
        }
        return old;
    }

    public int size() {
        return slots.size;
    }

    /** A snapshot of the values. */
    @SuppressWarnings("unchecked")
    public Collection<V> values() {
        Slots s = slots;
        List<V> out = new ArrayList<>(s.size);
        for (Object v : s.values) {
            if (v != null) {
                out.add((V) v);
            }
        }
        return out;
    }

    /** Key, value, key, value... of every entry but {@code key}'s if {@code skip}. */
    private List<Object> entriesExcept(int key, boolean skip) {
        Slots s = slots;
        List<Object> out = new ArrayList<>(2 * s.size + 2);
        for (int i = 0; i < s.keys.length; i++) {
            if (s.values[i] != null && !(skip && s.keys[i] == key)) {
                out.add(s.keys[i]);
                out.add(s.values[i]);
            }
        }
        return out;
    }

    private static Slots build(List<Object> entries) {
        int size = entries.size() / 2;
        int capacity = Integer.highestOneBit(Math.max(2, size) * 2 - 1) << 1; // a power of two >= 2 * size
        int[] keys = new int[capacity];
        Object[] values = new Object[capacity];
        for (int e = 0; e < entries.size(); e += 2) {
            int key = (Integer) entries.get(e);
            int i = spread(key) & (capacity - 1);
            while (values[i] != null) {
                i = (i + 1) & (capacity - 1);
            }
            keys[i] = key;
            values[i] = entries.get(e + 1);
        }
        return new Slots(keys, values, size);
    }

    /** rkeys are consecutive: a multiplicative hash spreads them over the table. */
    private static int spread(int key) {
        int h = key * 0x9E3779B9;
        return h ^ (h >>> 16);
    }
}
