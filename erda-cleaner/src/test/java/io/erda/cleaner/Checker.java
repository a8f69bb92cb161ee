package io.erda.cleaner;

import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentSkipListSet;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The linearizability-style check of the issue: a GET returns the latest acknowledged value of its
 * key or a newer one, never an older one (torn or mixed values are caught by {@link SimulatedServer}).
 */
final class Checker {
    private final ConcurrentHashMap<String, AtomicLong> acked = new ConcurrentHashMap<>();
    private final ConcurrentHashMap<String, ConcurrentSkipListSet<Long>> deletes = new ConcurrentHashMap<>();

    void acknowledged(String key, long version, boolean delete) {
        if (delete) {
            deletes.computeIfAbsent(key, k -> new ConcurrentSkipListSet<>()).add(version);
        }
        acked.computeIfAbsent(key, k -> new AtomicLong()).accumulateAndGet(version, Math::max);
    }

    /** The floor a read of {@code key} starting now must reach. */
    long floor(String key) {
        AtomicLong v = acked.get(key);
        return v == null ? 0 : v.get();
    }

    /** Reads {@code key} (retrying while both versions are in flight) and checks it against {@code floor}. */
    void checkedGet(SimulatedServer server, String key) {
        long floor = floor(key);
        long version = -1;
        for (int attempt = 0; version < 0; attempt++) {
            version = server.get(key);
            if (version < 0) {
                if (attempt > 100_000) {
                    throw new AssertionError(key + ": no complete version after " + attempt + " attempts");
                }
                Thread.yield();
            }
        }
        if (version == 0) {
            // absent: fine only if a delete at least as new as the floor exists (it may still be being acknowledged)
            for (int wait = 0; !deletedSince(key, floor); wait++) {
                if (wait > 1000) {
                    throw new AssertionError(key + ": not found, but version " + floor + " was acknowledged and no later delete");
                }
                sleep();
            }
        } else if (version < floor) {
            throw new AssertionError(key + ": read version " + version + ", older than acknowledged " + floor);
        }
    }

    private boolean deletedSince(String key, long floor) {
        ConcurrentSkipListSet<Long> d = deletes.get(key);
        return floor == 0 || (d != null && d.ceiling(floor) != null);
    }

    private static void sleep() {
        try {
            Thread.sleep(1);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new AssertionError(e);
        }
    }
}
