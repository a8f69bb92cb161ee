package io.erda.server;

import io.erda.fabric.Fabric;
import io.erda.server.baseline.Baselines;
import io.erda.server.rdmp.Rdmp;
import io.erda.server.store.CleanThreshold;
import io.erda.server.store.CleaningControl;
import io.erda.server.store.RegionRegistry;
import io.erda.server.store.Store;
import io.erda.server.store.StoreStats;

/**
 * The STATS reply: "name=value" lines. NVM bytes are measured: the server's own stores into PM plus what peers
 * wrote one-sided as the fabric counted it; where the fabric cannot count (verbs), {@code nvm_bytes_reserved} (object
 * bytes handed out by reservations) stands in for the remote part. The baselines' PM logs (redo log: SEND
 * placements, stamps, marks; ring: clients' WRITEs, zeroing, marks) are part of {@code nvm_bytes_written}.
 */
final class StatsReport {
    private final Store store;
    private final StoreStats stats;
    private final RegionRegistry registry;
    private final Fabric fabric;
    private final Baselines baselines;
    private final Rdmp rdmp;
    /** The cleaner's thresholds (while it is not started: {@link CleanThreshold#OFF}, no head cleaned). */
    private final CleaningControl cleaning;
    private final long startNanos = System.nanoTime();

    StatsReport(Store store, StoreStats stats, RegionRegistry registry, Fabric fabric, Baselines baselines, Rdmp rdmp,
                CleaningControl cleaning) {
        this.rdmp = rdmp;
        this.store = store;
        this.stats = stats;
        this.registry = registry;
        this.fabric = fabric;
        this.baselines = baselines;
        this.cleaning = cleaning;
    }

    String text() {
        long baselineLogs = baselines.bytesWritten();
        long rdmpPool = rdmp.bytesWritten();
        long local = store.directory().localBytesWritten() + baselineLogs - baselines.remoteBytesWritten() + rdmpPool
                - rdmp.remoteBytesWritten();
        // an RNIC places clients' WRITEs unseen: then the object bytes handed out by reservations stand in for them
        long objects = fabric.capabilities().remoteWritesCounted() ? registry.remoteBytesWritten()
                : stats.bytesReserved.sum();
        long remote = objects + baselines.remoteBytesWritten() + rdmp.remoteBytesWritten();
        StringBuilder b = new StringBuilder();
        line(b, "puts", stats.puts.sum());
        line(b, "deletes", stats.deletes.sum());
        line(b, "gets_two_sided", stats.getsTwoSided.sum());
        line(b, "flushes", stats.flushes.sum());
        line(b, "repair_hints", stats.repairHints.sum());
        line(b, "rollbacks", stats.rollbacks.sum());
        line(b, "removed_entries", stats.removedEntries.sum());
        line(b, "one_sided_put", store.oneSided() ? 1 : 0);
        line(b, "blocks_granted", stats.blocksGranted.sum());
        line(b, "blocks_returned", stats.blocksReturned.sum());
        line(b, "blocks_live", store.liveBlocks());
        line(b, "errors", stats.errors.sum());
        line(b, "nvm_bytes_written", local + remote);
        line(b, "nvm_bytes_local", local);
        line(b, "nvm_bytes_reserved", stats.bytesReserved.sum());
        line(b, "nvm_bytes_baseline_logs", baselineLogs);
        // part of nvm_bytes_written: what keeping the log costs (copies of live objects, zeroing of retired regions)
        line(b, "nvm_bytes_cleaner", stats.cleanerBytesCopied.sum() + store.directory().retiredZeroedBytes());
        line(b, "nvm_bytes_rdmp_pool", rdmpPool);
        baselines.stats((name, value) -> line(b, name, value));
        rdmp.stats((name, value) -> line(b, name, value));
        line(b, "server_cpu_ns", stats.serverCpuNanos.sum());
        line(b, "requests_served_directly", stats.requestsServedDirectly.sum());
        for (io.erda.protocol.MessageType t : StoreStats.REQUEST_TYPES) {
            line(b, "requests_" + t.name().toLowerCase(java.util.Locale.ROOT), stats.requests(t));
        }
        line(b, "engine_cpu_ns", fabric.stats().engineCpuNanos());
        line(b, "keys", store.keys());
        line(b, "pending_leases", store.pendingKeys());
        line(b, "table_capacity", store.directory().table().geometry().capacity());
        line(b, "regions_registered_ahead", stats.regionsRegisteredAhead.sum());
        line(b, "regions_registered_at_growth", stats.regionsRegisteredAtGrowth.sum());
        io.erda.core.log.RegionPool pool = store.directory().regionPool();
        line(b, "regions_reused", pool.reused());
        line(b, "regions_pooled", pool.size());
        line(b, "cleanings", stats.cleanings.sum());
        line(b, "cleaner_cpu_ns", stats.cleanerCpuNanos.sum());
        CleanThreshold threshold = cleaning.threshold(); // every value a number: 1/0 for auto, bytes (0: none)
        line(b, "clean_threshold_auto", threshold.auto() ? 1 : 0);
        line(b, "clean_threshold_bytes", threshold.bytes());
        // the taxonomy configuration the server runs as and its emulation follows: 1..12, Table 1's order
        // (PmConfiguration.code: 1 DMP+DDIO+DRAM-RQWRB ... 12 WSP+!DDIO+PM-RQWRB)
        line(b, "pm_configuration", registry.configuration().code());
        // per head: the bytes its chain occupies, and the size at which it is cleaned next (absent: not cleaned)
        for (int h = 0; h < store.directory().heads().size(); h++) {
            line(b, "head_" + h + "_occupied_bytes", store.directory().head(h).currentChain().logicalTail());
            long at = cleaning.thresholdOf(h);
            if (at != Long.MAX_VALUE) {
                line(b, "head_" + h + "_clean_above_bytes", at);
            }
        }
        // how the server's waiting threads waited, per wait loop (IdleStrategy): idle_<site>_<spins|yields|parks|blocks>
        io.erda.fabric.IdleStrategy.counts().forEach((site, c) -> {
            String prefix = "idle_" + site.replace('-', '_') + "_";
            line(b, prefix + "spins", c.spins());
            line(b, prefix + "yields", c.yields());
            line(b, prefix + "parks", c.parks());
            line(b, prefix + "blocks", c.blocks());
        });
        line(b, "uptime_ms", (System.nanoTime() - startNanos) / 1_000_000);
        return b.toString();
    }

    private static void line(StringBuilder b, String name, long value) {
        b.append(name).append('=').append(value).append('\n');
    }
}
