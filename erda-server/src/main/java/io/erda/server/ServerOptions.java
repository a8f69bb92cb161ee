package io.erda.server;

import io.erda.protocol.PersistenceMethod;
import io.erda.protocol.PutMode;
import io.erda.protocol.PmConfiguration;
import io.erda.server.platform.HugePages;
import io.erda.server.platform.PmEmulation;
import io.erda.server.rdmp.RdmpConfig;
import io.erda.server.store.CleanThreshold;
import java.net.URI;
import java.nio.file.Path;
import java.time.Duration;
import picocli.CommandLine.Option;

/**
 * The options of a store and its server that every server command shares, {@code erda-server} and a cluster member
 * ({@code erda-cluster-server}) alike: geometry, persistence, leases, PM emulation, huge pages, log cleaning, region
 * pool and file group. A picocli mixin; where and how a command listens, its directory and its request threads stay
 * the command's own.
 */
public final class ServerOptions {
    @Option(names = "--heads", paramLabel = "N", description = "Log heads of a new store (default "
            + ServerConfig.DEFAULT_HEADS + "). For an existing store, must match if given.")
    Integer heads;

    @Option(names = "--table-capacity", paramLabel = "KEYS", converter = ErdaServerMain.SizeConverter.class,
            description = "Hash table home buckets of a new store, rounded up to a power of two (default 1m). For an "
                    + "existing store, must match if given.")
    Long tableCapacity;

    @Option(names = "--region-size", paramLabel = "BYTES", converter = ErdaServerMain.SizeConverter.class,
            description = "Bytes of one log region file (default 1g; suffixes k, m, g). For an existing store, must "
                    + "match if given.")
    Long regionSize;

    @Option(names = "--segment-size", paramLabel = "BYTES", converter = ErdaServerMain.SizeConverter.class,
            description = "Bytes of one segment; bounds the largest object (default 8m). For an existing store, must "
                    + "match if given.")
    Long segmentSize;

    @Option(names = "--persistence", paramLabel = "METHOD", defaultValue = "wsp",
            description = "What a client does before it reports a PUT durable: wsp (nothing), read-after-write (a READ "
                    + "after its WRITE), server-flush (a FLUSH request). Default: ${DEFAULT-VALUE}.")
    String persistence;

    @Option(names = "--put", paramLabel = "MODE", defaultValue = "reserve",
            description = "How updates of existing keys are published: reserve (the paper's: a reservation request,"
                    + " the server flips the key's word) or one-sided (the client writes into a leased log block and"
                    + " CASes the word; needs remote atomics, and --persistence wsp or read-after-write;"
                    + " docs/one-sided-put.md). Default: ${DEFAULT-VALUE}.")
    String put;

    @Option(names = "--block-size", paramLabel = "BYTES", converter = ErdaServerMain.SizeConverter.class,
            description = "--put one-sided: bytes of a log block a client leases (capped at a segment's largest"
                    + " object). Default: 256k.")
    Long blockSize;

    @Option(names = "--lease-ms", paramLabel = "MS",
            description = "Lease of a reservation: after it the validator may roll back an incomplete object. "
                    + "Default: ${DEFAULT-VALUE}.")
    long leaseMillis = ServerConfig.DEFAULT_LEASE.toMillis();

    /** These options with another default reservation lease (a cluster member's is shorter, [cluster]). */
    public ServerOptions withDefaultLease(java.time.Duration lease) {
        leaseMillis = lease.toMillis();
        return this;
    }

    @Option(names = "--pm-write-latency-ns", paramLabel = "NS", defaultValue = "0",
            description = "Emulated PM write latency per 64-byte line for every writer (the papers use 150). "
                    + "Default: ${DEFAULT-VALUE}.")
    long pmWriteLatencyNanos;

    @Option(names = "--pm-emulation", paramLabel = "MODE", defaultValue = "none",
            description = "none, or power-failure: every PM file keeps NAME.durable, what the configuration "
                    + "(--pm-config) makes durable (WSP: everything, so no images are kept). After the process is "
                    + "killed, 'erda-server power-fail --dir DIR --seed S' collapses the store to what a power failure "
                    + "could leave; restart with the same options. Not on a kernel RNIC unless WSP. Small regions keep the "
                    + "collapse fast (--region-size 16m). Default: ${DEFAULT-VALUE}.")
    String pmEmulation;

    @Option(names = "--pm-config", paramLabel = "CONFIGURATION",
            description = "The server configuration of the remote-persistence taxonomy (docs/persistence.md): "
                    + "DMP|MHP|WSP + DDIO|!DDIO + DRAM|PM -RQWRB, e.g. DMP+DDIO+DRAM-RQWRB. Reported in HELLO and STATS; "
                    + "with --pm-emulation power-failure a power failure loses what it loses. Default: the one the "
                    + "persistence method is made for (wsp: WSP+DDIO+DRAM-RQWRB, read-after-write: "
                    + "DMP+!DDIO+DRAM-RQWRB, server-flush: DMP+DDIO+DRAM-RQWRB).")
    String pmConfig;

    @Option(names = "--huge-pages", paramLabel = "MODE", defaultValue = "off",
            description = "off, or thp: map the table and log regions with 2 MiB transparent huge pages (fewer TLB "
                    + "misses per GET on large stores). Needs --dir on a tmpfs mounted with huge=within_size or "
                    + "huge=always (as root: mount -t tmpfs -o huge=within_size,size=SIZE erda-pm DIR); each mapping is "
                    + "checked to be huge pages, and the server refuses to start, naming the setting to change, if "
                    + "not. Default: ${DEFAULT-VALUE}.")
    String hugePages;

    @Option(names = "--clean-threshold", paramLabel = "auto|BYTES", defaultValue = "auto",
            converter = CleanThresholdConverter.class,
            description = "When the log cleaner compacts a head (paper §4.4). auto (the default): once its chain holds "
                    + "at least " + CleanThreshold.AUTO_REGIONS + " log regions and more than twice the head's live "
                    + "bytes (what its last cleaning kept), so a store under updates stays within a few regions per "
                    + "head plus twice its data; BYTES (suffixes k, m, g): once the chain occupies more than this; 0: "
                    + "never. An interrupted cleaning is always resumed at start. To clean one head now, whatever the "
                    + "threshold, on a running server: scripts/erda-cli URI clean HEAD (prints the run's report).")
    CleanThreshold cleanThreshold;

    @Option(names = "--region-pool", paramLabel = "REGIONS",
            description = "Log regions the cleaner retires are zeroed; keep up to this many for new regions to reuse "
                    + "(their memory stays allocated and mapped: no new file, no first-touch faults) instead of "
                    + "deleting them; 0: delete every one. Default: as many as all heads' chains span when a cleaning "
                    + "begins (heads × ⌈threshold ÷ region size⌉; " + (CleanThreshold.AUTO_REGIONS - 1)
                    + " per head with auto), one per head at least.")
    Integer regionPool;

    @Option(names = "--rdmp-pool-size", paramLabel = "BYTES", converter = ErdaServerMain.SizeConverter.class,
            description = "PM object pool of RDMP-KV's protocols (herd, rdmp-sa, rdmp-cc), suffixes k, m, g (default "
                    + "64m; slots of up to 512 KiB, so it holds 256 KiB values); an existing pool keeps its size.")
    Long rdmpPoolSize;

    @Option(names = "--rdmp-sa-threshold", paramLabel = "BYTES", converter = ErdaServerMain.SizeConverter.class,
            description = "RDMP-SA sends values shorter than this in the request, the RDMA-HERD way (default 16k, the "
                    + "RDMP-KV paper's; 0: every value one-sided).")
    Long rdmpSaThreshold;

    @Option(names = "--group", paramLabel = "NAME", description = "Share the store's files with this group: 0660 "
            + "(the store directory 2770, the shm fabric's files and directories 0660/0770), so shm clients of other "
            + "users in it can map them. Default: the server's user only (0600, 0700). A store another user could "
            + "write (group-writable without --group, world-writable, or owned by another user) is refused.")
    String group;

    private RdmpConfig rdmpConfig() {
        RdmpConfig rdmp = RdmpConfig.DEFAULTS;
        if (rdmpPoolSize != null) {
            rdmp = rdmp.withPoolBytes(rdmpPoolSize);
        }
        if (rdmpSaThreshold != null) {
            if (rdmpSaThreshold > Integer.MAX_VALUE) {
                throw new IllegalArgumentException("--rdmp-sa-threshold " + rdmpSaThreshold + " exceeds "
                        + Integer.MAX_VALUE);
            }
            rdmp = rdmp.withSaThreshold(rdmpSaThreshold.intValue());
        }
        return rdmp;
    }

    /**
     * The configuration these options give for a store in {@code directory} listening on {@code listen} with
     * {@code workers} request threads, checked as a new store would take it (a bad value throws naming it).
     */
    public ServerConfig config(Path directory, URI listen, int workers) {
        ServerConfig config = ServerConfig.builder(directory, listen).heads(heads).tableCapacity(tableCapacity)
                .regionSize(regionSize).segmentSize(segmentSize).persistence(PersistenceMethod.fromOption(persistence))
                .lease(Duration.ofMillis(leaseMillis)).pmWriteLatencyNanos(pmWriteLatencyNanos).workers(workers)
                .group(group).pmEmulation(PmEmulation.fromOption(pmEmulation)
                        .withConfiguration(pmConfig == null ? null : PmConfiguration.parse(pmConfig)))
                .hugePages(HugePages.fromOption(hugePages)).cleanThreshold(cleanThreshold).regionPool(regionPool)
                .rdmp(rdmpConfig()).put(PutMode.fromOption(put))
                .blockSize(blockSize != null ? blockSize : ServerConfig.DEFAULT_BLOCK_SIZE).build();
        config.geometry(null); // the geometry options, checked as a new store would take them
        return config;
    }

    /** {@code --clean-threshold}: auto, or bytes with an optional k/m/g suffix (0: never). */
    static final class CleanThresholdConverter implements picocli.CommandLine.ITypeConverter<CleanThreshold> {
        @Override
        public CleanThreshold convert(String value) {
            if (value.trim().toLowerCase(java.util.Locale.ROOT).equals("auto")) {
                return CleanThreshold.AUTO;
            }
            long b = new ErdaServerMain.SizeConverter().convert(value);
            if (b < 0) {
                throw new picocli.CommandLine.TypeConversionException("clean threshold " + value
                        + " is negative: give auto, 0 (never) or a size");
            }
            return CleanThreshold.of(b);
        }
    }

    /** The group the store's files are shared with ({@code --group}), or null. */
    public String group() {
        return group;
    }
}
