package io.erda.client;

import io.erda.fabric.IdleStrategy;
import io.erda.protocol.memory.AtomicWord;
import io.erda.protocol.memory.Key;
import io.erda.protocol.memory.KeyHash;
import io.erda.protocol.memory.NeighbourhoodWindow;
import io.erda.protocol.memory.ObjectCheck;
import java.lang.foreign.MemorySegment;

/**
 * The Erda GET (paper §3.3, §4.2, §4.3; docs/ARCHITECTURE.md, [leases], [last-complete-version],
 * [moves-vs-readers]), on one connection:
 * <ol>
 *   <li>READ the key's neighbourhood window; for each entry whose fingerprint matches, READ the object at the
 *       current offset and check key and CRC. A complete object with the key is the answer (a tombstone means
 *       not found): a hit is trusted.</li>
 *   <li>Current incomplete (torn, or a write still in flight): READ the previous version; complete means answer.</li>
 *   <li>Neither complete: wait with exponential backoff and start again, for at most the retry budget, then ask
 *       the server two-sided (it knows its pending reservations, [last-complete-version]).</li>
 *   <li>No entry for the key: a miss is only reported once confirmed by the stripe-version protocol (versions,
 *       window, versions; [moves-vs-readers]), so a concurrent hopscotch move never yields a false "not found".</li>
 * </ol>
 * Entries are read through {@link RemoteTable}, objects through {@link ObjectReader}. Results are slices of the
 * connection's read buffer, valid until the connection's next request.
 */
final class ErdaGet {
    private static final IdleStrategy.Policy RETRY_PAUSE = IdleStrategy.Policy.park("get-retry", 20_000, 2_000_000);
    /** Added to the lease for the default retry budget: the server's validator runs just after expiry. */
    private static final long BUDGET_MARGIN_NANOS = 50_000_000;

    /** What one round of the one-sided protocol found: an answer (the value, null for a tombstone), or why not. */
    private record Round(Kind kind, MemorySegment value) {
        enum Kind { ANSWER, NO_ENTRY, UNRESOLVED }

        static final Round NO_ENTRY = new Round(Kind.NO_ENTRY, null);
        static final Round UNRESOLVED = new Round(Kind.UNRESOLVED, null);
    }

    private final ClientStats stats;
    private final RemoteTable table;
    private final ObjectReader objects;
    private final ClientOptions options;

    ErdaGet(ClientStats stats, RemoteTable table, ObjectReader objects, ClientOptions options) {
        this.stats = stats;
        this.table = table;
        this.objects = objects;
        this.options = options;
    }

    /** The value of {@code key} (a slice of the connection's buffers), or null if it does not exist. */
    MemorySegment get(ClientConnection c, Key key) {
        StoreView view = c.view();
        if (view.isCleaning(KeyHash.headId(key.hash(), view.info().headCount()))) {
            return twoSided(c, key);
        }
        IdleStrategy pause = null; // made at the first retry, with the budget: a GET answered at once reads no clock
        long deadline = 0;
        boolean confirming = false;
        try {
            while (true) {
                MemorySegment before = confirming ? table.windowVersions(c, key, RemoteTable.BEFORE) : null;
                MemorySegment window = table.window(c, key);
                MemorySegment after = confirming ? table.windowVersions(c, key, RemoteTable.AFTER) : null;
                Round round = resolve(c, key, window);
                switch (round.kind()) {
                    case ANSWER:
                        return round.value();
                    case NO_ENTRY:
                        if (!confirming) {
                            confirming = true; // first miss: look again between two version reads, no pause
                            continue;
                        }
                        if (NeighbourhoodWindow.missConfirmed(before, after)) {
                            stats.missConfirmations.increment();
                            return null;
                        }
                        break;
                    case UNRESOLVED:
                        break;
                }
                stats.getRetries.increment();
                long now = System.nanoTime();
                if (pause == null) {
                    pause = RETRY_PAUSE.newStrategy();
                    deadline = now + retryBudgetNanos(view);
                }
                if (now - deadline >= 0) {
                    return twoSided(c, key);
                }
                pause.idle();
            }
        } finally {
            if (pause != null) {
                pause.reset(); // its counts
            }
        }
    }

    /** How long a GET retries one-sided before it asks the server. */
    private long retryBudgetNanos(StoreView view) {
        return options.readRetryBudget() != null ? options.readRetryBudget().toNanos()
                : view.info().leaseNanos() + BUDGET_MARGIN_NANOS;
    }

    /** Looks through the candidate entries of one window (objects are read into another buffer). */
    private Round resolve(ClientConnection c, Key key, MemorySegment window) {
        long mask = NeighbourhoodWindow.candidates(window, c.view().table().neighbourhood(), key.hash());
        boolean unresolved = false;
        for (; mask != 0; mask &= mask - 1) {
            int index = Long.numberOfTrailingZeros(mask);
            long word = NeighbourhoodWindow.atomicWord(window, index);
            int head = NeighbourhoodWindow.headId(window, index);
            long current = AtomicWord.current(word);
            if (current == AtomicWord.NONE) {
                continue; // caught half-inserted or half-removed: no complete version to give
            }
            ObjectReader.Result read = objects.read(c, head, current, key);
            if (read.check() == ObjectCheck.KEY_MISMATCH) {
                continue; // another key with the same fingerprint
            }
            if (!read.isValid()) {
                long previous = AtomicWord.previous(word);
                if (previous == AtomicWord.NONE) {
                    unresolved = true;
                    continue;
                }
                stats.previousVersionReads.increment();
                read = objects.read(c, head, previous, key);
                if (read.check() == ObjectCheck.KEY_MISMATCH) {
                    continue;
                }
                if (!read.isValid()) {
                    unresolved = true;
                    continue;
                }
            }
            return new Round(Round.Kind.ANSWER, read.value());
        }
        return unresolved ? Round.UNRESOLVED : Round.NO_ENTRY;
    }

    /** Server-side GET: the fallback once one-sided reads ran out of budget, and the path for heads being cleaned. */
    private MemorySegment twoSided(ClientConnection c, Key key) {
        stats.twoSidedGets.increment();
        return c.getTwoSided(key);
    }
}
