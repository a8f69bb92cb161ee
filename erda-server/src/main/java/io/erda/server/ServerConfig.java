package io.erda.server;

import io.erda.core.PmDirectory;
import io.erda.core.StoreGeometry;
import io.erda.core.log.LogGeometry;
import io.erda.core.table.HopscotchTable;
import io.erda.core.table.TableGeometry;
import io.erda.protocol.PersistenceMethod;
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
 */
public record ServerConfig(Path directory, URI listen, Integer heads, Long tableCapacity, Long regionSize,
                           Long segmentSize, PersistenceMethod persistence, Duration lease, long pmWriteLatencyNanos,
                           int workers, String group, PmEmulation pmEmulation, HugePages hugePages) {
    public static final int DEFAULT_HEADS = 4;
    public static final long DEFAULT_TABLE_CAPACITY = 1L << 20;
    public static final Duration DEFAULT_LEASE = Duration.ofSeconds(1);

    public ServerConfig {
        Objects.requireNonNull(directory, "directory");
        Objects.requireNonNull(listen, "listen");
        Objects.requireNonNull(persistence, "persistence");
        Objects.requireNonNull(lease, "lease");
        Objects.requireNonNull(pmEmulation, "pmEmulation");
        Objects.requireNonNull(hugePages, "hugePages");
        if (lease.isNegative() || lease.isZero()) {
            throw new IllegalArgumentException("lease " + lease.toMillis() + " ms is not positive");
        }
        if (pmWriteLatencyNanos < 0) {
            throw new IllegalArgumentException("PM write latency " + pmWriteLatencyNanos + " ns is negative");
        }
        if (workers < 1 || workers > 64) {
            throw new IllegalArgumentException("worker count " + workers + " outside [1, 64]");
        }
        if (group != null && group.isBlank()) {
            group = null;
        }
    }

    public ServerConfig withGroup(String newGroup) {
        return new ServerConfig(directory, listen, heads, tableCapacity, regionSize, segmentSize, persistence, lease,
                pmWriteLatencyNanos, workers, newGroup, pmEmulation, hugePages);
    }

    /** What the fabric is opened with: the shm provider makes its files for {@link #group()} too. */
    public java.util.Map<String, String> fabricProperties() {
        return group == null ? java.util.Map.of() : java.util.Map.of("group", group);
    }

    /** A config whose files are its user's only (no group), without PM emulation ({@link PmEmulation#NONE}). */
    public ServerConfig(Path directory, URI listen, Integer heads, Long tableCapacity, Long regionSize,
                        Long segmentSize, PersistenceMethod persistence, Duration lease, long pmWriteLatencyNanos,
                        int workers) {
        this(directory, listen, heads, tableCapacity, regionSize, segmentSize, persistence, lease, pmWriteLatencyNanos,
                workers, null, PmEmulation.NONE, HugePages.OFF);
    }

    /** A config as the command line gives it before {@code --huge-pages} existed: huge pages off. */
    public ServerConfig(Path directory, URI listen, Integer heads, Long tableCapacity, Long regionSize,
                        Long segmentSize, PersistenceMethod persistence, Duration lease, long pmWriteLatencyNanos,
                        int workers, String group, PmEmulation pmEmulation) {
        this(directory, listen, heads, tableCapacity, regionSize, segmentSize, persistence, lease, pmWriteLatencyNanos,
                workers, group, pmEmulation, HugePages.OFF);
    }

    /** A config with defaults for everything but the directory and listen URI (tests, embedding). */
    public static ServerConfig defaults(Path directory, URI listen) {
        return new ServerConfig(directory, listen, null, null, null, null, PersistenceMethod.WSP, DEFAULT_LEASE, 0, 1);
    }

    public ServerConfig withGeometry(int newHeads, long newCapacity, long newRegionSize, long newSegmentSize) {
        return new ServerConfig(directory, listen, newHeads, newCapacity, newRegionSize, newSegmentSize, persistence,
                lease, pmWriteLatencyNanos, workers, group, pmEmulation, hugePages);
    }

    public ServerConfig withLease(Duration newLease) {
        return new ServerConfig(directory, listen, heads, tableCapacity, regionSize, segmentSize, persistence, newLease,
                pmWriteLatencyNanos, workers, group, pmEmulation, hugePages);
    }

    public ServerConfig withPersistence(PersistenceMethod method) {
        return new ServerConfig(directory, listen, heads, tableCapacity, regionSize, segmentSize, method, lease,
                pmWriteLatencyNanos, workers, group, pmEmulation, hugePages);
    }

    public ServerConfig withListen(URI uri) {
        return new ServerConfig(directory, uri, heads, tableCapacity, regionSize, segmentSize, persistence, lease,
                pmWriteLatencyNanos, workers, group, pmEmulation, hugePages);
    }

    /** This config with {@code emulation} (power-failure: durable images for the offline collapse). */
    public ServerConfig withPmEmulation(PmEmulation emulation) {
        return new ServerConfig(directory, listen, heads, tableCapacity, regionSize, segmentSize, persistence, lease,
                pmWriteLatencyNanos, workers, group, emulation, hugePages);
    }

    /** This config with the table and log regions mapped as {@code mode} says. */
    public ServerConfig withHugePages(HugePages mode) {
        return new ServerConfig(directory, listen, heads, tableCapacity, regionSize, segmentSize, persistence, lease,
                pmWriteLatencyNanos, workers, group, pmEmulation, mode);
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

    /** The geometry of the store in {@link #directory()} if there is one, else null. */
    public StoreGeometry storedGeometry() {
        return PmDirectory.exists(directory) ? PmDirectory.storedGeometry(directory) : null;
    }
}
