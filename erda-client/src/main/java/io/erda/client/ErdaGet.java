package io.erda.client;

import io.erda.core.hash.Key;
import io.erda.core.hash.KeyHash;
import io.erda.core.layout.AtomicWord;
import io.erda.core.layout.ObjectCheck;
import io.erda.core.table.NeighbourhoodWindow;
import io.erda.core.table.TableGeometry;
import io.erda.protocol.MessageType;
import io.erda.protocol.WireStatus;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.concurrent.locks.LockSupport;

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
 * Results are slices of the connection's read buffer, valid until the connection's next request.
 */
final class ErdaGet {
    private static final long MIN_PAUSE_NANOS = 20_000;
    private static final long MAX_PAUSE_NANOS = 2_000_000;
    /** Added to the lease for the default retry budget: the server's validator runs just after expiry. */
    private static final long BUDGET_MARGIN_NANOS = 50_000_000;

    /** What one round of the one-sided protocol found. */
    private enum Round { VALUE, ABSENT, NO_ENTRY, UNRESOLVED }

    private final ClientStats stats;
    private final ObjectReader objects;
    private final ClientOptions options;

    ErdaGet(ClientStats stats, ObjectReader objects, ClientOptions options) {
        this.stats = stats;
        this.objects = objects;
        this.options = options;
    }

    /** The value of {@code key} (a slice of the connection's buffers), or null if it does not exist. */
    MemorySegment get(Connection c, Key key) {
        StoreView view = c.view();
        if (view.isCleaning(KeyHash.headId(key.hash(), view.info().headCount()))) {
            return twoSided(c, key);
        }
        long budget = options.readRetryBudget() != null ? options.readRetryBudget().toNanos()
                : view.info().leaseNanos() + BUDGET_MARGIN_NANOS;
        long deadline = System.nanoTime() + budget;
        long pause = MIN_PAUSE_NANOS;
        boolean confirming = false;
        while (true) {
            MemorySegment before = confirming ? readVersions(c, key) : null;
            MemorySegment window = readWindow(c, key);
            MemorySegment after = confirming ? readVersions(c, key) : null;
            Round round = resolve(c, key, window);
            switch (round) {
                case VALUE:
                    return ObjectReader.value(c);
                case ABSENT:
                    return null;
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
            if (System.nanoTime() - deadline >= 0) {
                return twoSided(c, key);
            }
            LockSupport.parkNanos(pause);
            pause = Math.min(pause * 2, MAX_PAUSE_NANOS);
        }
    }

    /** Looks through the candidate entries of one window copy. */
    private Round resolve(Connection c, Key key, MemorySegment window) {
        TableGeometry table = c.view().table();
        long mask = NeighbourhoodWindow.candidates(window, table.neighbourhood(), key.hash());
        boolean unresolved = false;
        for (; mask != 0; mask &= mask - 1) {
            int index = Long.numberOfTrailingZeros(mask);
            long word = NeighbourhoodWindow.atomicWord(window, index);
            int head = NeighbourhoodWindow.headId(window, index);
            long current = AtomicWord.current(word);
            if (current == AtomicWord.NONE) {
                continue; // caught half-inserted or half-removed: no complete version to give
            }
            ObjectCheck check = objects.read(c, head, current, key);
            if (check == ObjectCheck.KEY_MISMATCH) {
                continue; // another key with the same fingerprint
            }
            if (!check.isValid()) {
                long previous = AtomicWord.previous(word);
                if (previous == AtomicWord.NONE) {
                    unresolved = true;
                    continue;
                }
                stats.previousVersionReads.increment();
                check = objects.read(c, head, previous, key);
                if (check == ObjectCheck.KEY_MISMATCH) {
                    continue;
                }
                if (!check.isValid()) {
                    unresolved = true;
                    continue;
                }
            }
            return ObjectReader.value(c) == null ? Round.ABSENT : Round.VALUE;
        }
        return unresolved ? Round.UNRESOLVED : Round.NO_ENTRY;
    }

    /**
     * [leases], for a PUT that outlived its lease: true if the entry of {@code key} still has the object at chain
     * offset {@code units} of {@code head} as current, and the head array has not changed since the reservation
     * ({@code generation}). False means it may have been rolled back: PUT again.
     *
     * <p>Chain offsets do not order versions: the cleaner moves objects to another chain and a chain takes free
     * slots at any offset (paper §4.4, core's {@code LogChain}), and a slot may even hold the same offset again in a
     * later chain. So a different current version, a head being cleaned or a changed generation all answer false:
     * the PUT, which has not returned, is simply ordered after whatever happened meanwhile. That costs one more PUT in
     * a rare case (a lease outlived), never a lost one. A concurrent move that hides the entry also answers false.
     */
    boolean currentAndUnchanged(Connection c, Key key, int head, long units, int generation) {
        StoreView view = c.view();
        if (view.isCleaning(head) || view.generation(head) != generation) {
            return false;
        }
        MemorySegment window = readWindow(c, key);
        long mask = NeighbourhoodWindow.candidates(window, view.table().neighbourhood(), key.hash());
        for (; mask != 0; mask &= mask - 1) {
            int index = Long.numberOfTrailingZeros(mask);
            if (NeighbourhoodWindow.headId(window, index) == head
                    && AtomicWord.current(NeighbourhoodWindow.atomicWord(window, index)) == units) {
                return true;
            }
        }
        return false;
    }

    /** READs the window of {@code key}'s home bucket; returns a heap copy (the read buffer is reused for objects). */
    private MemorySegment readWindow(Connection c, Key key) {
        StoreView view = c.view();
        stats.oneSidedReads.increment();
        TableGeometry table = view.table();
        long home = table.homeBucket(key.hash());
        return readCopy(c, table.windowLength(), view.windowAddress(home), view.info().table().rkey());
    }

    private MemorySegment readVersions(Connection c, Key key) {
        StoreView view = c.view();
        long home = view.table().homeBucket(key.hash());
        stats.oneSidedReads.increment();
        return readCopy(c, view.table().windowVersionsLength(home), view.windowVersionsAddress(home), view.info().stripes().rkey());
    }

    private static MemorySegment readCopy(Connection c, int length, long address, int rkey) {
        c.reads.ensure(length);
        c.read(0, length, address, rkey);
        return MemorySegment.ofArray(c.reads.segment().asSlice(0, length).toArray(ValueLayout.JAVA_BYTE));
    }

    /** Server-side GET: the fallback once one-sided reads ran out of budget, and the path for heads being cleaned. */
    private MemorySegment twoSided(Connection c, Key key) {
        stats.twoSidedGets.increment();
        return c.getTwoSided(key);
    }
}
