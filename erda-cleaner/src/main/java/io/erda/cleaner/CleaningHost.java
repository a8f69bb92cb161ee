package io.erda.cleaner;

import io.erda.core.pm.PmRegion;
import java.time.Duration;
import java.util.List;
import java.util.function.LongPredicate;
import java.util.function.Supplier;

/**
 * What the cleaner needs from the process that serves the store (the server, or a test standing in
 * for it). The cleaner never talks to clients or the fabric itself ("cleaner → core").
 */
public interface CleaningHost {
    /**
     * Runs {@code action} under the store's mutation lock: the lock the PUT path holds while it
     * reserves and flips an entry. Table and head changes by the cleaner happen only in here.
     */
    <T> T locked(Supplier<T> action);

    default void locked(Runnable action) {
        locked(() -> {
            action.run();
            return null;
        });
    }

    /**
     * The head started ({@code cleaning}) or finished being cleaned: tell its clients, with the
     * head array (generation from the head record, regions of every chain), so they switch to
     * two-sided requests for it (paper §4.4) or back.
     */
    void headStateChanged(int headId, boolean cleaning);

    /**
     * The head's writes now go to its new chain ({@code awaitSettled} follows, for what was granted before). A host
     * whose clients hold leased log blocks tells them, so they give back blocks of the old chain at once rather than
     * when full or at the lease's end. Called without the lock.
     */
    default void writesRedirected(int headId) {
    }

    /** Regions were added to a head (the new chain grew under the cleaner's copies): register them. Called locked. */
    void regionsAdded(int headId);

    /**
     * The cleaner copied (and persisted) {@code bytes} of a live object into the new chain: PM it wrote. Called without
     * the lock, before the copy is recorded in its entry (a PUT may supersede the object meanwhile: the copy is then
     * not recorded, and was written all the same).
     */
    default void bytesCopied(long bytes) {
    }

    /** These regions are about to be zeroed and deleted: deregister them from the fabric first. */
    void retiring(int headId, List<PmRegion> regions);

    /**
     * Returns once every reservation (lease) of {@code headId} issued before {@code issuedBeforeNanos}
     * ({@link #nanoTime()} clock) is settled: its object is complete or its entry was rolled back
     * (docs/ARCHITECTURE.md, [leases]). Must not be called holding the lock.
     */
    void awaitSettled(int headId, long issuedBeforeNanos) throws InterruptedException;

    /**
     * Called locked: how many times a lease rollback has pointed an entry of {@code headId} back at an older version
     * (docs/ARCHITECTURE.md, [last-complete-version]); a count that only grows. The cleaner compares it across a pass
     * over the table in chunks: once a chunk left its entries clean, only a rollback can make one name the old chain
     * again.
     */
    long rollbacks(int headId);

    /**
     * Whether a pending reservation of {@code headId} could be rolled back to a version its entry no longer names, one
     * of a word for which {@code word} holds. True when a record of a key whose newest object is incomplete has a
     * word-before-flip (its way back) that {@code word} accepts. Called without the lock: the host may take it in
     * parts, as the answer for a key holds once found (a record's object, once complete, stays complete; records
     * created later have words from later).
     */
    boolean rollbackMayRestore(int headId, LongPredicate word);

    /** The longest a client's round trip may take: the wait after telling clients (paper §4.4). */
    Duration maxRoundTrip();

    default long nanoTime() {
        return System.nanoTime();
    }

    default void sleep(Duration duration) throws InterruptedException {
        Thread.sleep(duration);
    }
}
