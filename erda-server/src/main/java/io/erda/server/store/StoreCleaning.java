package io.erda.server.store;

import io.erda.server.platform.DaemonThreads;
import io.erda.cleaner.CleaningHook;
import io.erda.cleaner.CleaningHost;
import io.erda.cleaner.CleaningPoint;
import io.erda.cleaner.CleaningReport;
import io.erda.cleaner.LogCleaner;
import io.erda.core.pm.PmRegion;
import java.time.Duration;
import java.util.List;
import java.util.function.BooleanSupplier;
import java.util.function.LongPredicate;
import java.util.function.Supplier;
import java.util.logging.Level;
import java.util.logging.Logger;

/**
 * The server side of log cleaning (paper §4.4): the {@link CleaningHost} over the store's lock, leases and region
 * registry, and the background thread that cleans a head once its chain passes the threshold and, at start, rolls
 * forward a run a crash cut short.
 *
 * <p>Crash testing: the environment variable {@value #HALT_AT} names a {@link CleaningPoint}; when a run reaches it
 * the process halts at once (no shutdown hooks), as a kill -9 there would.
 */
final class StoreCleaning implements CleaningHost, AutoCloseable {
    static final String HALT_AT = "ERDA_CLEANER_HALT_AT";
    private static final Logger LOG = Logger.getLogger(StoreCleaning.class.getName());
    private static final Duration MAX_ROUND_TRIP = Duration.ofMillis(10);
    private static final long POLL_MILLIS = 50;
    private static final java.lang.management.ThreadMXBean THREADS = java.lang.management.ManagementFactory.getThreadMXBean();

    private final Store store;
    private final RegionRegistry registry;
    private final StoreStats stats;
    private final LogCleaner cleaner;
    private final CleanThreshold threshold;
    private final long regionSize;
    /**
     * Bound on waiting for clients to acknowledge the switched head array before the old chain is deregistered: an
     * idle client acknowledges nothing, and only delays the reclaim by this much (it has no READ in flight).
     */
    private static final Duration MAX_ACKNOWLEDGE_WAIT = Duration.ofMillis(200);
    /** Sends every connected client the current head array (HEAD_STATE); returns whether all acknowledged it. */
    private final Supplier<BooleanSupplier> notifyClients;
    /** Per head, acknowledgement of the head array that ended its cleaning (before its old chain retires). */
    private final java.util.Map<Integer, BooleanSupplier> switchAcknowledged = new java.util.concurrent.ConcurrentHashMap<>();
    /** One run at a time: the background loop and admin CLEAN requests. */
    private final Object runs = new Object();
    private volatile boolean running = true;
    private volatile CleaningReport last;
    /**
     * Per head, the bytes its last run left of its own (0 before any): what the chain occupied when the run ended, less
     * what clients appended to the new chain after the run redirected their writes there (versions written during a
     * long replicate, in one-sided mode whole blocks, which the next run frees, not live data the run kept); see
     * {@link #due}.
     */
    private final java.util.concurrent.atomic.AtomicLongArray occupiedAfter;
    /** Per head, {@link io.erda.core.log.LogHead#bytesReserved} when the run under way redirected writes to its new chain (-1: none). */
    private final java.util.concurrent.atomic.AtomicLongArray appendedAtRedirect;
    /** Heads already warned about live data near the threshold (warned once each). */
    private final boolean[] warned;
    private Thread thread;

    StoreCleaning(Store store, RegionRegistry registry, StoreStats stats, CleanThreshold threshold,
                  Supplier<BooleanSupplier> notifyClients) {
        this.store = store;
        this.registry = registry;
        this.stats = stats;
        this.threshold = threshold;
        this.regionSize = store.directory().geometry().log().regionSize();
        this.notifyClients = notifyClients;
        this.cleaner = new LogCleaner(store.directory(), this, haltHook(System.getenv(HALT_AT)));
        this.occupiedAfter = new java.util.concurrent.atomic.AtomicLongArray(store.directory().heads().size());
        this.appendedAtRedirect = new java.util.concurrent.atomic.AtomicLongArray(occupiedAfter.length());
        for (int head = 0; head < appendedAtRedirect.length(); head++) {
            appendedAtRedirect.set(head, -1);
        }
        this.warned = new boolean[occupiedAfter.length()];
    }

    private static CleaningHook haltHook(String point) {
        if (point == null || point.isBlank()) {
            return CleaningHook.NONE;
        }
        CleaningPoint at = CleaningPoint.valueOf(point.trim());
        return (head, reached) -> {
            if (reached == at) {
                System.out.println("erda-server: cleaning of head " + head + " reached " + at + ", halting");
                System.out.flush();
                Runtime.getRuntime().halt(137);
            }
        };
    }

    /** Starts the thread: resumes interrupted runs, then cleans heads over their threshold (never if it is off). */
    void start(DaemonThreads threads) {
        thread = threads.start("erda-cleaner", this::run);
    }

    private void run() {
        try {
            synchronized (runs) {
                for (int head : cleaner.interruptedHeads()) {
                    charged(() -> cleaner.resume(head));
                }
            }
            while (running && threshold.enabled()) {
                for (int head : cleaner.headsOver(this::thresholdOf)) {
                    synchronized (runs) {
                        if (cleaner.headsOver(this::thresholdOf).contains(head) && due(head)) {
                            charged(() -> cleaner.clean(head));
                        }
                    }
                }
                Thread.sleep(POLL_MILLIS);
            }
        } catch (InterruptedException stop) {
            Thread.currentThread().interrupt();
        } catch (RuntimeException e) {
            // closing interrupts a run, and an interrupted file operation fails it: that is the close, not a fault
            LOG.log(running ? Level.SEVERE : Level.FINE, "log cleaner stopped; the head resumes cleaning at the next start", e);
        }
    }

    /**
     * Cleans one head now (admin request); blocks until done, after a run already under way. Its CPU counts as the
     * background runs' does, so the caller must be a platform thread (a virtual thread's CPU time is not measured).
     */
    CleaningReport clean(int head) throws InterruptedException {
        synchronized (runs) {
            return charged(() -> cleaner.clean(head));
        }
    }

    CleaningReport lastReport() {
        return last;
    }

    /** A cleaning run of the background thread. */
    @FunctionalInterface
    private interface Run {
        CleaningReport run() throws InterruptedException;
    }

    /**
     * Runs and reports a run, background or admin; its CPU counts as cleaner CPU and server CPU (none is counted on a
     * thread whose CPU time the JVM does not measure).
     */
    private CleaningReport charged(Run run) throws InterruptedException {
        long before = THREADS.getCurrentThreadCpuTime();
        CleaningReport r = report(run.run());
        long used = THREADS.getCurrentThreadCpuTime() - before;
        if (before >= 0 && used > 0) {
            stats.cleanerCpuNanos.add(used);
            stats.serverCpuNanos.add(used);
        }
        return r;
    }

    CleanThreshold threshold() {
        return threshold;
    }

    /**
     * The chain bytes above which {@code head} is cleaned: the fixed threshold, or for {@link CleanThreshold#AUTO}
     * what the head's region size and live bytes give; the live bytes are what its last run kept.
     */
    long thresholdOf(int head) {
        return threshold.forHead(regionSize, occupiedAfter.get(head));
    }

    /**
     * Whether a head over its threshold is due: its chain has grown by more than half the threshold since its last
     * run ended. A head whose live data alone is more than half a fixed threshold would otherwise be cleaned back to
     * back, every run copying all of it to free little (with live data over the threshold, without end). The automatic
     * threshold is at least twice the live bytes, so a head over it is always due.
     */
    private boolean due(int head) {
        return cleaner.occupiedBytes(head) - occupiedAfter.get(head) > thresholdOf(head) / 2;
    }

    private CleaningReport report(CleaningReport r) {
        stats.cleanings.increment();
        long redirected = appendedAtRedirect.getAndSet(r.headId(), -1);
        long appended = redirected < 0 ? 0 : store.directory().head(r.headId()).bytesReserved() - redirected;
        long kept = Math.max(0, r.occupiedAfter() - appended);
        occupiedAfter.set(r.headId(), kept);
        long bytes = threshold.bytes();
        if (!threshold.auto() && bytes > 0 && kept > bytes / 2 && !warned[r.headId()]) {
            warned[r.headId()] = true;
            LOG.warning(() -> "head " + r.headId() + " still occupies " + kept + " bytes after cleaning,"
                    + " more than half the clean threshold of " + bytes + ": it is cleaned again only after "
                    + bytes / 2 + " more bytes (raise --clean-threshold above twice a head's live data, or use auto)");
        }
        last = r;
        LOG.info(() -> "cleaned " + r);
        return r;
    }

    @Override
    public <T> T locked(Supplier<T> action) {
        return store.locked(action);
    }

    @Override
    public void headStateChanged(int headId, boolean cleaning) {
        registry.chainGrew(headId);
        registry.cleaning(headId, cleaning);
        BooleanSupplier acknowledged = notifyClients.get();
        if (!cleaning) {
            switchAcknowledged.put(headId, acknowledged);
        }
    }

    /**
     * Notes what clients have appended to the head so far, so that what they append to the new chain from now on is not
     * taken for what the run kept ({@link #occupiedAfter}). One-sided mode: a new head-array generation, sent to the
     * clients, so that a block granted in the old chain while the head merged is seen as stale at its holder's next
     * operation and given back (the wait before the switch waits for it otherwise until it is full or its lease ends).
     */
    @Override
    public void writesRedirected(int headId) {
        appendedAtRedirect.set(headId, store.directory().head(headId).bytesReserved());
        if (store.oneSided()) {
            registry.cleaning(headId, true);
            notifyClients.get();
        }
    }

    @Override
    public void regionsAdded(int headId) {
        registry.chainGrew(headId);
    }

    @Override
    public void bytesCopied(long bytes) {
        stats.cleanerBytesCopied.add(bytes);
    }

    @Override
    public void retiring(int headId, List<PmRegion> regions) {
        // deregister only once the clients acknowledged the switched head array: a GET that read an entry of the old
        // chain before has ended by then (a reader stalled longer than a round trip would otherwise lose its
        // connection to the stale rkey, as on RC verbs; it would reconnect and retry, but need not)
        BooleanSupplier acknowledged = switchAcknowledged.remove(headId);
        long deadline = System.nanoTime() + MAX_ACKNOWLEDGE_WAIT.toNanos();
        while (acknowledged != null && !acknowledged.getAsBoolean() && System.nanoTime() < deadline) {
            try {
                Thread.sleep(1);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                break;
            }
        }
        registry.retiring(headId, regions);
        // the cleaner told clients the switched head array a round trip ago, so no client that processed it still
        // reads these regions; now they learn that the slots are free (a chain may take them again)
        notifyClients.get();
        // a NIC-engine operation that looked the region up just before the deregistration must be done before the
        // cleaner zeroes and unmaps it: the tcp responder drops the connection on an access to an unmapped segment
        try {
            Thread.sleep(MAX_ROUND_TRIP);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    @Override
    public void awaitSettled(int headId, long issuedBeforeNanos) throws InterruptedException {
        while (!store.leases().settledBefore(headId, issuedBeforeNanos)) {
            Thread.sleep(1);
        }
        // one-sided mode: a block granted before may still be written and its objects published by CAS until its
        // lease ends, and a CAS sent just before the end lands up to a round trip later (docs/one-sided-put.md)
        // a busy client gives its block back at its next operation (it sees the head's state change); an idle one's
        // lease runs out: wait in short steps, so that a give-back ends the wait
        long wait = store.blocksWaitNanos(headId, issuedBeforeNanos);
        if (wait > 0) {
            do {
                java.util.concurrent.TimeUnit.NANOSECONDS.sleep(Math.min(wait, 1_000_000));
                wait = store.blocksWaitNanos(headId, issuedBeforeNanos);
            } while (wait > 0);
            Thread.sleep(MAX_ROUND_TRIP); // a CAS sent just before the give-back or the lease's end lands by then
        }
    }

    @Override
    public long rollbacks(int headId) {
        return store.leases().rollbacks(headId);
    }

    @Override
    public boolean rollbackMayRestore(int headId, LongPredicate word) {
        return store.leases().rollbackMayRestore(headId, word);
    }

    @Override
    public Duration maxRoundTrip() {
        return MAX_ROUND_TRIP;
    }

    @Override
    public void close() {
        running = false;
        if (thread != null) {
            thread.interrupt();
            try {
                thread.join(5000);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
    }
}
