package io.erda.server;

import io.erda.core.PmDirectory;
import io.erda.core.StoreGeometry;
import io.erda.core.pm.MappingAdvice;
import io.erda.core.pm.WriteLatencyModel;
import io.erda.core.table.HopscotchTable;
import io.erda.protocol.PersistenceMethod;
import io.erda.protocol.PutMode;
import io.erda.protocol.memory.LogGeometry;
import io.erda.protocol.memory.TableGeometry;
import io.erda.server.platform.HugePages;
import io.erda.server.platform.PmEmulation;
import io.erda.server.rdmp.RdmpConfig;
import io.erda.server.store.CleanThreshold;
import io.erda.server.store.Store;
import io.erda.server.store.StoreStats;
import java.net.URI;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Objects;

/**
 * Everything a server is started with.
 *
 * <p>The geometry fields ({@code heads}, {@code tableCapacity}, {@code regionSize}, {@code segmentSize}) are null
 * when not given: a new store then takes the defaults, an existing store keeps what it was created with. When
 * given, an existing store must match them or opening fails naming found vs expected.
 *
 * @param directory           the PM directory of the store
 * @param listen              the fabric URI to listen on (tcp://host:port, port 0 picks one; shm:///dir)
 * @param persistence         what clients do before they report a PUT durable (docs/ARCHITECTURE.md, [persistence])
 * @param lease               how long a reservation belongs to its client before the validator may check it
 * @param pmWriteLatencyNanos emulated PM write latency per 64-byte line, for every writer (0: off)
 * @param workers             threads handling requests from the shared receive queue
 * @param group               the group that may share the store's files and the shm fabric's (0660; directories
 *                            2770 and 0770), or null: the server's user only (0600, 0700). docs/ARCHITECTURE.md,
 *                            "Security model"
 * @param pmEmulation         power-failure emulation or none ({@link PmEmulation})
 * @param hugePages           whether the table and log regions are mapped with huge pages ({@link HugePages})
 * @param cleanThreshold      when the log cleaner cleans a head ({@link CleanThreshold}); applied by
 *                            {@link RequestServer#startCleaning()}
 * @param regionPool          retired log regions kept zeroed for reuse, or null: {@link CleanThreshold#defaultPool}
 * @param rdmp                RDMP-KV's protocols: their PM pool's size and RDMP-SA's threshold ({@link RdmpConfig})
 * @param put                 how updates of existing keys are published ({@link PutMode}; docs/one-sided-put.md)
 * @param blockSize           bytes of a log block leased for one-sided updates (capped at a segment's largest object)
 */
public record ServerConfig(Path directory, URI listen, Integer heads, Long tableCapacity, Long regionSize,
                           Long segmentSize, PersistenceMethod persistence, Duration lease, long pmWriteLatencyNanos,
                           int workers, String group, PmEmulation pmEmulation, HugePages hugePages,
                           CleanThreshold cleanThreshold, Integer regionPool, RdmpConfig rdmp, PutMode put,
                           long blockSize) {
    public static final int DEFAULT_HEADS = 4;
    public static final long DEFAULT_TABLE_CAPACITY = 1L << 20;
    public static final Duration DEFAULT_LEASE = Duration.ofSeconds(1);
    public static final long DEFAULT_BLOCK_SIZE = 256 << 10;

    public ServerConfig {
        Objects.requireNonNull(directory, "directory");
        Objects.requireNonNull(listen, "listen");
        Objects.requireNonNull(persistence, "persistence");
        Objects.requireNonNull(lease, "lease");
        Objects.requireNonNull(pmEmulation, "pmEmulation");
        Objects.requireNonNull(hugePages, "hugePages");
        Objects.requireNonNull(cleanThreshold, "cleanThreshold");
        Objects.requireNonNull(rdmp, "rdmp");
        Objects.requireNonNull(put, "put");
        if (blockSize < 8 || blockSize % 8 != 0) {
            throw new IllegalArgumentException("block size " + blockSize + " is not a positive multiple of 8");
        }
        if (put == PutMode.ONE_SIDED && persistence == PersistenceMethod.SERVER_FLUSH) {
            throw new IllegalArgumentException("--put one-sided needs --persistence wsp or read-after-write:"
                    + " server-flush's FLUSH request would make every update two-sided again");
        }
        if (lease.isNegative() || lease.isZero()) {
            throw new IllegalArgumentException("lease " + lease.toMillis() + " ms is not positive");
        }
        if (pmWriteLatencyNanos < 0) {
            throw new IllegalArgumentException("PM write latency " + pmWriteLatencyNanos + " ns is negative");
        }
        if (workers < 1 || workers > 64) {
            throw new IllegalArgumentException("worker count " + workers + " outside [1, 64]");
        }
        if (regionPool != null && regionPool < 0) {
            throw new IllegalArgumentException("region pool " + regionPool
                    + " is negative: give 0 (delete retired regions) or more");
        }
        if (group != null && group.isBlank()) {
            group = null;
        }
    }

    /** A builder with the defaults: geometry of the store (or the defaults), wsp, 1 s lease, 1 worker, no cleaning. */
    public static Builder builder(Path directory, URI listen) {
        return new Builder(directory, listen);
    }

    /** A config with defaults for everything but the directory and listen URI (tests, embedding). */
    public static ServerConfig defaults(Path directory, URI listen) {
        return builder(directory, listen).build();
    }

    /** A builder holding this config's values. */
    public Builder toBuilder() {
        return new Builder(directory, listen).heads(heads).tableCapacity(tableCapacity).regionSize(regionSize)
                .segmentSize(segmentSize).persistence(persistence).lease(lease).pmWriteLatencyNanos(pmWriteLatencyNanos)
                .workers(workers).group(group).pmEmulation(pmEmulation).hugePages(hugePages)
                .cleanThreshold(cleanThreshold).regionPool(regionPool).rdmp(rdmp).put(put).blockSize(blockSize);
    }

    public ServerConfig withGroup(String newGroup) {
        return toBuilder().group(newGroup).build();
    }

    /** What the fabric is opened with: the shm provider makes its files for {@link #group()} too. */
    public java.util.Map<String, String> fabricProperties() {
        return group == null ? java.util.Map.of() : java.util.Map.of("group", group);
    }

    public ServerConfig withGeometry(int newHeads, long newCapacity, long newRegionSize, long newSegmentSize) {
        return toBuilder().heads(newHeads).tableCapacity(newCapacity).regionSize(newRegionSize)
                .segmentSize(newSegmentSize).build();
    }

    public ServerConfig withLease(Duration newLease) {
        return toBuilder().lease(newLease).build();
    }

    public ServerConfig withPersistence(PersistenceMethod method) {
        return toBuilder().persistence(method).build();
    }

    public ServerConfig withListen(URI uri) {
        return toBuilder().listen(uri).build();
    }

    /** This config with {@code emulation} (power-failure: durable images for the offline collapse). */
    public ServerConfig withPmEmulation(PmEmulation emulation) {
        return toBuilder().pmEmulation(emulation).build();
    }

    /** This config with the table and log regions mapped as {@code mode} says. */
    public ServerConfig withHugePages(HugePages mode) {
        return toBuilder().hugePages(mode).build();
    }

    /** The regions the cleaner's pool keeps: {@link #regionPool()} if given, else the threshold's default. */
    public int regionPoolFor(int storeHeads, long storeRegionSize) {
        return regionPool != null ? regionPool : cleanThreshold.defaultPool(storeHeads, storeRegionSize);
    }

    /** Builds a {@link ServerConfig}; every field but the directory and listen URI has a default. */
    public static final class Builder {
        private Path directory;
        private URI listen;
        private Integer heads;
        private Long tableCapacity;
        private Long regionSize;
        private Long segmentSize;
        private PersistenceMethod persistence = PersistenceMethod.WSP;
        private Duration lease = DEFAULT_LEASE;
        private long pmWriteLatencyNanos;
        private int workers = 1;
        private String group;
        private PmEmulation pmEmulation = PmEmulation.NONE;
        private HugePages hugePages = HugePages.OFF;
        private CleanThreshold cleanThreshold = CleanThreshold.OFF;
        private Integer regionPool;
        private RdmpConfig rdmp = RdmpConfig.DEFAULTS;
        private PutMode put = PutMode.RESERVE;
        private long blockSize = DEFAULT_BLOCK_SIZE;

        private Builder(Path directory, URI listen) {
            this.directory = directory;
            this.listen = listen;
        }

        public Builder directory(Path value) {
            directory = value;
            return this;
        }

        public Builder listen(URI value) {
            listen = value;
            return this;
        }

        /** Log heads of a new store; null: the stored count, or {@value #DEFAULT_HEADS}. */
        public Builder heads(Integer value) {
            heads = value;
            return this;
        }

        public Builder tableCapacity(Long value) {
            tableCapacity = value;
            return this;
        }

        public Builder regionSize(Long value) {
            regionSize = value;
            return this;
        }

        public Builder segmentSize(Long value) {
            segmentSize = value;
            return this;
        }

        public Builder persistence(PersistenceMethod value) {
            persistence = value;
            return this;
        }

        public Builder lease(Duration value) {
            lease = value;
            return this;
        }

        public Builder pmWriteLatencyNanos(long value) {
            pmWriteLatencyNanos = value;
            return this;
        }

        public Builder workers(int value) {
            workers = value;
            return this;
        }

        public Builder group(String value) {
            group = value;
            return this;
        }

        public Builder pmEmulation(PmEmulation value) {
            pmEmulation = value;
            return this;
        }

        public Builder hugePages(HugePages value) {
            hugePages = value;
            return this;
        }

        public Builder cleanThreshold(CleanThreshold value) {
            cleanThreshold = value;
            return this;
        }

        public Builder regionPool(Integer value) {
            regionPool = value;
            return this;
        }

        /** The config, checked (a bad value throws naming it). */
        public Builder rdmp(RdmpConfig value) {
            rdmp = value;
            return this;
        }

        public Builder put(PutMode value) {
            put = value;
            return this;
        }

        public Builder blockSize(long value) {
            blockSize = value;
            return this;
        }

        public ServerConfig build() {
            return new ServerConfig(directory, listen, heads, tableCapacity, regionSize, segmentSize, persistence, lease,
                    pmWriteLatencyNanos, workers, group, pmEmulation, hugePages, cleanThreshold, regionPool, rdmp, put,
                    blockSize);
        }
    }

    /**
     * The geometry to open or create with: each field given here, else the stored one ({@code stored} null for a
     * new store), else the default.
     */
    public StoreGeometry geometry(StoreGeometry stored) {
        int h = heads != null ? heads : stored != null ? stored.heads() : DEFAULT_HEADS;
        TableGeometry table = tableCapacity != null
                ? TableGeometry.forCapacity(tableCapacity, HopscotchTable.DEFAULT_NEIGHBOURHOOD)
                : stored != null ? stored.table()
                : TableGeometry.forCapacity(DEFAULT_TABLE_CAPACITY, HopscotchTable.DEFAULT_NEIGHBOURHOOD);
        LogGeometry base = stored != null ? stored.log() : LogGeometry.defaults();
        LogGeometry log = new LogGeometry(regionSize != null ? regionSize : base.regionSize(),
                segmentSize != null ? segmentSize : base.segmentSize(), base.highWaterGranule());
        return new StoreGeometry(h, table, log);
    }

    /**
     * Creates the store of this config or reopens it (tails from the high-water marks, then its recovery); a store of
     * another format version or geometry is refused with a {@code PmFormatException} naming both.
     */
    public Store openStore(StoreStats stats) {
        pmEmulation.prepare(directory, persistence);
        StoreGeometry stored = storedGeometry();
        WriteLatencyModel latency = new WriteLatencyModel(pmWriteLatencyNanos);
        MappingAdvice advice = hugePages.advice(directory); // refuses a mount without huge pages
        PmDirectory pm = stored == null
                ? PmDirectory.create(directory, geometry(null), latency, group, advice)
                : PmDirectory.open(directory, geometry(stored), latency, group, advice);
        return Store.open(pm, lease, stats);
    }

    /** The geometry of the store in {@link #directory()} if there is one, else null. */
    public StoreGeometry storedGeometry() {
        return PmDirectory.exists(directory) ? PmDirectory.storedGeometry(directory) : null;
    }
}
