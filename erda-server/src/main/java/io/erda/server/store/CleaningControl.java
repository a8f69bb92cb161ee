package io.erda.server.store;

import io.erda.server.platform.DaemonThreads;
import io.erda.cleaner.CleaningReport;
import io.erda.core.PmDirectory;
import java.util.function.BooleanSupplier;
import java.util.function.Supplier;

/**
 * Whether and how the log cleaner (paper §4.4) runs on a served store: nothing until {@link #start}, then one
 * {@link StoreCleaning} with its threshold and region pool; asked for thresholds before that, it answers as a cleaner
 * that never cleans.
 */
public final class CleaningControl implements AutoCloseable {
    private final Store store;
    private final RegionRegistry registry;
    private final StoreStats stats;
    /** Sends every connected client the current head array (HEAD_STATE); returns whether all acknowledged it. */
    private final Supplier<BooleanSupplier> notifyClients;
    private final DaemonThreads threads;
    private volatile StoreCleaning cleaning;

    /** The cleaner's thread, once started, is {@code threads}'. */
    public CleaningControl(Store store, RegionRegistry registry, StoreStats stats,
                           Supplier<BooleanSupplier> notifyClients, DaemonThreads threads) {
        this.threads = threads;
        this.store = store;
        this.registry = registry;
        this.stats = stats;
        this.notifyClients = notifyClients;
    }

    /**
     * Starts the cleaner with {@code threshold}, keeping at most {@code poolRegions} retired regions zeroed for reuse
     * (0: delete every one; null: {@link CleanThreshold#defaultPool}): rolls forward a cleaning run a crash
     * interrupted, then cleans every head its threshold says is due. Once; later calls change nothing.
     */
    public synchronized void start(CleanThreshold threshold, Integer poolRegions) {
        if (cleaning == null) {
            PmDirectory pm = store.directory();
            long regionSize = pm.geometry().log().regionSize();
            pm.regionPool().capacity(poolRegions != null ? poolRegions
                    : threshold.defaultPool(pm.heads().size(), regionSize));
            cleaning = new StoreCleaning(store, registry, stats, threshold, notifyClients);
            cleaning.start(threads);
        }
    }

    /** The cleaner's threshold, or {@link CleanThreshold#OFF} while it is not started. */
    public CleanThreshold threshold() {
        StoreCleaning c = cleaning;
        return c == null ? CleanThreshold.OFF : c.threshold();
    }

    /** The bytes above which head {@code head}'s chain is cleaned now; {@link Long#MAX_VALUE}: not cleaned. */
    public long thresholdOf(int head) {
        StoreCleaning c = cleaning;
        return c == null ? Long.MAX_VALUE : c.thresholdOf(head);
    }

    /** Cleans one head now and returns what the run did (the admin request; the cleaner must be started). */
    public CleaningReport clean(int head) throws InterruptedException {
        StoreCleaning c = cleaning;
        if (c == null) {
            throw new IllegalStateException("the log cleaner is not started");
        }
        return c.clean(head);
    }

    /** Stops the cleaner's thread, if it was started (a run it was in resumes at the next start). */
    @Override
    public void close() {
        StoreCleaning c = cleaning;
        if (c != null) {
            c.close();
        }
    }
}
