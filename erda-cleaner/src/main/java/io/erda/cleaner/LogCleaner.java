package io.erda.cleaner;

import io.erda.core.PmDirectory;
import io.erda.core.log.CleaningPhase;
import io.erda.core.log.HeadRecords;
import io.erda.core.log.LogChain;
import io.erda.core.log.LogHead;
import io.erda.core.table.HopscotchTable;
import io.erda.protocol.memory.AtomicWord;
import io.erda.protocol.memory.LogAddress;
import io.erda.protocol.memory.ObjectFlyweight;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.LongStream;

/**
 * The log cleaner (paper §4.4, Figs. 9-13): compacts one head at a time while the server keeps
 * serving it, driven by the server through a {@link CleaningHost}.
 *
 * <ol>
 *   <li><b>Begin</b> (locked): create the new chain, remember the old chain's tail, record MERGE;
 *       tell the head's clients (two-sided mode) and wait the maximum round trip.</li>
 *   <li><b>Merge</b>: copy each of the head's current versions that lies in the old chain below that
 *       tail and record the copy in the entry's other slot without flipping; remove entries whose
 *       current version is a tombstone; stale versions are never visited. Where the paper scans the
 *       log in reverse and keeps the first version of each key it meets, the entries say which
 *       versions are current here (the same answer, and right under concurrent PUTs and torn gaps),
 *       so the cleaner passes over the table, in locked chunks, instead of reading the log: a chain
 *       is cleaned when it is mostly stale, and reading, checksumming and looking up every stale
 *       version cost three quarters of the cleaner's CPU ({@link Run#relocate}).</li>
 *   <li><b>Replicate</b> (locked start): writes go to the new chain; record REPLICATE; copy the
 *       current versions written to the old chain during the merge (another pass over the table);
 *       wait until every reservation made in the old chain is settled (complete or rolled back,
 *       docs/ARCHITECTURE.md, [leases]).</li>
 *   <li><b>Switch</b>: record SWITCH; flip the tags of the head's entries in passes of locked
 *       chunks until a pass leaves no entry referencing the old chain (waiting out reservations
 *       whose rollback target is still there); in one short lock hold confirm that no rollback
 *       undid the pass or could, record RETIRE(g+1) and make the new chain the head's
 *       ({@link Run#detachUntilClean}). Tell clients. Once the reservations issued before the switch
 *       are settled, a last pass checks it; after a round trip the old regions are deregistered,
 *       zeroed and deleted ([recycled-memory]); record IDLE.</li>
 * </ol>
 *
 * <p><b>Crash consistency.</b> The head record ({@link HeadRecords}) changes with single persisted
 * stores; copies are persisted before an entry points at them; offsets are self-describing. So at
 * every instant every entry's versions resolve in the chains open will map for the recorded phase,
 * and every durable PUT is reachable from its entry. Recovery ({@link #resume}) rolls forward from
 * any phase: the table, not a saved scan position, says what is left to copy.
 */
public final class LogCleaner {
    /**
     * Buckets per lock hold of the passes over the table (merge and replicate collect current versions, the switch
     * detaches entries). Detaching an entry reads and checks its object and copy (about 2 µs for 1 KiB), so with half
     * the buckets used a hold of 4,096 lasted about 4 ms, and the 99.9th percentile of PUTs during a cleaning waited
     * for one.
     */
    private static final long SWITCH_CHUNK_BUCKETS = 512;
    private static final int MAX_DETACH_PASSES = 1000;

    private final PmDirectory store;
    private final CleaningHost host;
    private final CleaningHook hook;

    public LogCleaner(PmDirectory store, CleaningHost host, CleaningHook hook) {
        this.store = store;
        this.host = host;
        this.hook = hook;
    }

    /** Bytes the head's chain occupies (what the cleaning threshold is compared with). */
    public long occupiedBytes(int headId) {
        return store.head(headId).currentChain().logicalTail();
    }

    /** Heads whose chain occupies more than their threshold ({@code thresholdOfHead}) and that are not being cleaned. */
    public List<Integer> headsOver(java.util.function.IntToLongFunction thresholdOfHead) {
        List<Integer> over = new ArrayList<>();
        for (int h = 0; h < store.heads().size(); h++) {
            if (store.headRecords().phase(h) == CleaningPhase.IDLE && occupiedBytes(h) > thresholdOfHead.applyAsLong(h)) {
                over.add(h);
            }
        }
        return over;
    }

    /** Heads whose record says a cleaning run was cut short (by a crash): {@link #resume} each. */
    public List<Integer> interruptedHeads() {
        List<Integer> interrupted = new ArrayList<>();
        for (int h = 0; h < store.heads().size(); h++) {
            if (store.headRecords().phase(h).hasNewChain()) {
                interrupted.add(h);
            }
        }
        return interrupted;
    }

    /** Cleans one head; the head must be IDLE. Concurrent PUTs and GETs go on meanwhile. */
    public CleaningReport clean(int headId) throws InterruptedException {
        LogHead head = store.head(headId);
        HeadRecords records = store.headRecords();
        Run run = new Run(headId, head);
        long[] mergeEnd = new long[1];
        host.locked(() -> {
            CleaningPhase phase = records.phase(headId);
            if (phase != CleaningPhase.IDLE) {
                throw new IllegalStateException("head " + headId + " is in cleaning phase " + phase + ", expected IDLE");
            }
            head.beginNewChain();
            mergeEnd[0] = head.currentChain().logicalTail();
            records.set(headId, CleaningPhase.MERGE, run.generation);
            host.regionsAdded(headId);
        });
        run.old = head.currentChain();
        run.occupiedBefore = mergeEnd[0];
        hook.reached(headId, CleaningPoint.BEGUN);
        run.tellClients(true);
        host.sleep(host.maxRoundTrip()); // paper §4.4: in-flight one-sided requests finish first

        long mergeStart = host.nanoTime();
        run.relocate(0, mergeEnd[0], CleaningPoint.MERGE_MIDWAY);
        run.merge = Duration.ofNanos(host.nanoTime() - mergeStart);
        hook.reached(headId, CleaningPoint.MERGED);

        long replicateStart = host.nanoTime();
        long replicateEnd = run.redirectWrites(CleaningPhase.REPLICATE);
        host.writesRedirected(headId);
        hook.reached(headId, CleaningPoint.REPLICATE_STARTED);
        run.relocate(mergeEnd[0], replicateEnd, CleaningPoint.REPLICATE_MIDWAY);
        host.awaitSettled(headId, run.redirectNanos);
        run.replicate = Duration.ofNanos(host.nanoTime() - replicateStart);
        hook.reached(headId, CleaningPoint.REPLICATED);
        return run.finish();
    }

    /**
     * Rolls an interrupted run forward (after a crash; the host has done its own recovery, so no
     * reservation from before the crash is pending): writes to the new chain, copies whatever the
     * old chain still holds that an entry needs, then switches and retires as {@link #clean} does.
     */
    public CleaningReport resume(int headId) throws InterruptedException {
        LogHead head = store.head(headId);
        HeadRecords records = store.headRecords();
        if (!records.phase(headId).hasNewChain()) {
            throw new IllegalStateException("head " + headId + " is in cleaning phase " + records.phase(headId)
                    + ": nothing to resume");
        }
        Run run = new Run(headId, head);
        run.old = head.currentChain();
        run.occupiedBefore = run.old.logicalTail();
        run.tellClients(true);
        long start = host.nanoTime();
        long end = run.redirectWrites(records.phase(headId) == CleaningPhase.MERGE ? CleaningPhase.REPLICATE : null);
        host.writesRedirected(headId);
        run.relocate(0, end, CleaningPoint.REPLICATE_MIDWAY);
        host.awaitSettled(headId, run.redirectNanos);
        run.replicate = Duration.ofNanos(host.nanoTime() - start);
        return run.finish();
    }

    /** One cleaning run of one head. */
    private final class Run {
        final int headId;
        final LogHead head;
        final HopscotchTable table = store.table();
        final Relocation relocation;
        final int generation;
        final long started = host.nanoTime();
        LogChain old;
        long occupiedBefore;
        long redirectNanos;
        long toldNanos;
        Duration merge = Duration.ZERO;
        Duration replicate = Duration.ZERO;

        Run(int headId, LogHead head) {
            this.headId = headId;
            this.head = head;
            this.relocation = new Relocation(host, head, table);
            this.generation = store.headRecords().generation(headId);
        }

        void tellClients(boolean cleaning) {
            host.headStateChanged(headId, cleaning);
            if (cleaning) {
                toldNanos = host.nanoTime();
            }
        }

        /** Locked: writes go to the new chain from now on; returns the old chain's final tail. */
        long redirectWrites(CleaningPhase record) {
            return host.locked(() -> {
                head.redirectWritesToNewChain();
                if (record != null) {
                    store.headRecords().set(headId, record, generation);
                }
                redirectNanos = host.nanoTime();
                return old.logicalTail();
            });
        }

        /**
         * Merge or replicate: relocates the current versions that lie in the old chain's logical {@code [from, to)}.
         * The entries say which versions those are: a pass over the table in locked chunks collects them, and each is
         * then validated, planned (locked), copied (unlocked) and recorded (locked) as {@link Relocation} says. A
         * version not valid yet (its WRITE still in flight) or not found because a rollback or a hopscotch move
         * raced the pass is left to the switch, which copies whatever the entries still need from the old chain.
         */
        void relocate(long from, long to, CleaningPoint midway) {
            long capacity = table.geometry().capacity();
            boolean toldMidway = false;
            for (long home = 0; home < capacity; home += SWITCH_CHUNK_BUCKETS) {
                if (!toldMidway && home >= capacity / 2) {
                    toldMidway = true;
                    hook.reached(headId, midway);
                }
                long chunkStart = home;
                long[] current = host.locked(() -> currentInOldChain(chunkStart, chunkStart + SWITCH_CHUNK_BUCKETS, from, to));
                for (long units : current) {
                    ObjectFlyweight object = relocation.validObject(units);
                    if (object == null) {
                        continue;
                    }
                    long offset = LogAddress.bytesForUnits(units);
                    Relocation.Copy copy = host.locked(() -> relocation.plan(offset, object));
                    if (copy != null) {
                        relocation.write(copy); // without the lock: PUTs go on meanwhile
                        host.locked(() -> relocation.record(copy));
                    }
                }
            }
            if (!toldMidway) {
                hook.reached(headId, midway);
            }
        }

        /**
         * Locked: the current versions (in units) of the head's entries with home buckets in {@code [fromHome, toHome)}
         * that lie in the old chain's logical {@code [from, to)}.
         */
        long[] currentInOldChain(long fromHome, long toHome, long from, long to) {
            LongStream.Builder found = LongStream.builder();
            table.forEach(fromHome, toHome, (position, word, fingerprint, h) -> {
                long units = AtomicWord.current(word);
                if (h != headId || units == AtomicWord.NONE) {
                    return;
                }
                long logical = old.logical(LogAddress.bytesForUnits(units));
                if (logical >= from && logical < to) {
                    found.add(units);
                }
            });
            return found.build().toArray();
        }

        CleaningReport finish() throws InterruptedException {
            long switchStart = host.nanoTime();
            store.headRecords().set(headId, CleaningPhase.SWITCH, generation);
            hook.reached(headId, CleaningPoint.SWITCH_STARTED);
            long[] occupiedAfter = new long[1];
            long switchNanos = detachUntilClean(() -> {
                store.headRecords().set(headId, CleaningPhase.RETIRE, generation + 1); // the commit point
                head.switchToNewChain();
                occupiedAfter[0] = head.currentChain().logicalTail();
            }, () -> hook.reached(headId, CleaningPoint.SWITCH_MIDWAY));
            Duration switchOver = Duration.ofNanos(host.nanoTime() - switchStart);
            hook.reached(headId, CleaningPoint.SWITCHED);
            tellClients(false);
            Duration twoSided = Duration.ofNanos(host.nanoTime() - toldNanos);

            long retireStart = host.nanoTime();
            host.awaitSettled(headId, switchNanos);
            // a guard: the commit's condition leaves no rollback that could return an entry to the old chain
            detachUntilClean(() -> { }, () -> { });
            host.sleep(host.maxRoundTrip()); // one-sided readers that read an old word are done with the old chain
            host.retiring(headId, old.regions());
            head.retire(old);
            store.headRecords().set(headId, CleaningPhase.IDLE, generation + 1);
            Duration retire = Duration.ofNanos(host.nanoTime() - retireStart);
            hook.reached(headId, CleaningPoint.DONE);
            return new CleaningReport(headId, generation, generation + 1, occupiedBefore, occupiedAfter[0],
                    relocation.bytesCopied, relocation.objectsCopied, relocation.staleSkipped, relocation.entriesRemoved,
                    merge, replicate, switchOver, retire, twoSided, Duration.ofNanos(host.nanoTime() - started));
        }

        /** Locked: detaches the head's entries with home buckets in the range; returns how many are pending. */
        int detach(long fromHome, long toHome) {
            List<long[]> referencing = new ArrayList<>();
            table.forEach(fromHome, toHome, (position, word, fingerprint, h) -> {
                if (h == headId && Relocation.references(word, old)) {
                    referencing.add(new long[] {position, word});
                }
            });
            int pending = 0;
            for (long[] entry : referencing) {
                if (relocation.detachFromOldChain((int) entry[0], entry[1], old) == Relocation.Outcome.PENDING) {
                    pending++;
                }
            }
            return pending;
        }

        /**
         * Passes over the table in locked chunks until one leaves no entry of the head referencing the old chain and
         * nothing can have made one reference it again; then {@code whenClean} runs, in one short lock hold that
         * confirms it. Returns the host time of that hold. {@code midway} runs halfway through the first pass.
         *
         * <p>No hold is longer than a chunk's: a full pass under the lock stalled every PUT for milliseconds (4 to 6
         * with a 1 M-bucket table), growing with the table's capacity. Chunks suffice because, once a chunk left its
         * entries clean, only a lease rollback can make one of them name the old chain again: a flip makes an
         * entry's current the new chain's reservation (writes went there at REPLICATE) and its previous the clean
         * current; inserts and hopscotch moves keep the home bucket the chunks go by. So the pass counts if no pending
         * reservation could roll its entry back into the old chain ({@link CleaningHost#rollbackMayRestore}, asked
         * after the pass: a record that could was made before its entry's chunk was passed, and is still there unless
         * it settled complete or rolled back) and if, in the hold, the host has counted no rollback of the head since
         * the pass began ({@link CleaningHost#rollbacks}): from the commit point on, no entry names the old chain
         * again.
         */
        long detachUntilClean(Runnable whenClean, Runnable midway) throws InterruptedException {
            long capacity = table.geometry().capacity();
            int pending = 0;
            for (int pass = 0; pass < MAX_DETACH_PASSES; pass++) {
                long rollbacksBefore = host.locked(() -> host.rollbacks(headId));
                pending = 0;
                for (long from = 0; from < capacity; from += SWITCH_CHUNK_BUCKETS) {
                    long chunkStart = from;
                    pending += host.locked(() -> detach(chunkStart, chunkStart + SWITCH_CHUNK_BUCKETS));
                    if (pass == 0 && from < capacity / 2 && from + SWITCH_CHUNK_BUCKETS >= capacity / 2) {
                        midway.run();
                    }
                }
                if (pending == 0 && !host.rollbackMayRestore(headId, word -> Relocation.references(word, old))) {
                    long cleanAt = host.locked(() -> {
                        if (host.rollbacks(headId) != rollbacksBefore) {
                            return -1L;
                        }
                        whenClean.run();
                        return host.nanoTime();
                    });
                    if (cleanAt >= 0) {
                        return cleanAt;
                    }
                }
                // what keeps an entry on the old chain is a pending reservation: wait until those issued so far
                // settle, after which a pass converges unless new ones keep coming back to the old chain
                host.awaitSettled(headId, host.nanoTime());
            }
            throw new IllegalStateException("head " + headId + " still needs the old chain " + old + " after "
                    + MAX_DETACH_PASSES + " passes (" + pending + " entries pending in the last); cleaning stays in phase "
                    + store.headRecords().phase(headId) + " (resume it once reservations settle)");
        }
    }
}
