package io.erda.core;

import io.erda.core.log.CleaningPhase;
import io.erda.core.log.HeadDescriptor;
import io.erda.core.log.HeadRecords;
import io.erda.core.log.LogChain;
import io.erda.core.log.LogHead;
import io.erda.core.log.RegionPool;
import io.erda.core.pm.MappingAdvice;
import io.erda.core.pm.PmFileHeader;
import io.erda.core.pm.PmFileModes;
import io.erda.core.pm.PmFormatException;
import io.erda.core.pm.PmRegion;
import io.erda.core.pm.WriteLatencyModel;
import io.erda.core.table.HopscotchTable;
import io.erda.protocol.memory.LogGeometry;
import io.erda.protocol.memory.TableGeometry;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;

/**
 * The PM layout of one store in a directory: {@code table.pm}, {@code heads.pm} (one
 * {@link io.erda.core.log.HeadRecord} per head: served chain generation and cleaning phase) and,
 * per head, its region files {@code head-HHHHH-region-SSSSS.pm} named by slot ({@link LogChain}), and retired regions
 * kept zeroed for reuse, {@code pool-NNNNN.pm} ({@link RegionPool}: part of no chain, so open deletes them).
 * Every file's header records the geometry; opening a directory created with another format version
 * or geometry fails naming found vs expected.
 *
 * <p>Header geometry slots: table 3 heads, 4 region size, 5 segment size (after the table's own);
 * region 0 head id, 1 slot (region index in the head's offset space), 2 segment size, 3 high-water
 * granule, 4 chain generation, 5 position in its chain (data length = region size).
 *
 * <p><b>Which files form a head</b> (paper §4.4 cleaning, crash at any point): the head record says
 * generation {@code g} and a phase. The head serves the regions of generation {@code g} in position
 * order; while the phase has a new chain (MERGE..SWITCH) the regions of {@code g+1} are opened as the
 * new chain. Any other region file (the old chain of a RETIRE, or a new chain's first region created
 * just before a crash ended the IDLE phase) is referenced by no entry: open zeroes and deletes it and
 * finishes a RETIRE by recording IDLE.
 */
public final class PmDirectory implements AutoCloseable {
    public static final String TABLE_FILE = "table.pm";
    private static final int GEOMETRY_SLOT = 1;
    /** Geometry slots of a region file's header: the generation of the chain it belongs to, and its place there. */
    public static final int GEOMETRY_GENERATION = 4;
    public static final int GEOMETRY_POSITION = 5;
    private static final Pattern REGION_FILE = Pattern.compile("head-(\\d{5,})-region-(\\d{5,})\\.pm");

    private final Path directory;
    private final StoreGeometry geometry;
    private final HopscotchTable table;
    private final HeadRecords records;
    private final List<LogHead> heads;
    private final RegionPool pool;

    private PmDirectory(Path directory, StoreGeometry geometry, HopscotchTable table, HeadRecords records,
                        List<LogHead> heads, RegionPool pool) {
        this.directory = directory;
        this.geometry = geometry;
        this.table = table;
        this.records = records;
        this.heads = List.copyOf(heads);
        this.pool = pool;
    }

    /** File name of the region at slot {@code slot} of head {@code headId}. */
    public static String regionFileName(int headId, int slot) {
        return String.format("head-%05d-region-%05d.pm", headId, slot);
    }

    /** Creates a new store in {@code directory}, for its owner only ({@link #create(Path, StoreGeometry, WriteLatencyModel, String)}). */
    public static PmDirectory create(Path directory, StoreGeometry geometry, WriteLatencyModel latency) {
        return create(directory, geometry, latency, null);
    }

    /**
     * Creates a new store in {@code directory} (created if missing; must not already hold a table), which is made
     * {@code 0700}, or {@code 2770} with {@code group} (null: none) so its files are {@code 0660} for that group
     * ({@link PmFileModes}).
     */
    public static PmDirectory create(Path directory, StoreGeometry geometry, WriteLatencyModel latency, String group) {
        return create(directory, geometry, latency, group, MappingAdvice.NONE);
    }

    /**
     * {@link #create(Path, StoreGeometry, WriteLatencyModel, String)} with {@code advice} applied to the mappings of
     * the table and of every log region, those made later included.
     */
    public static PmDirectory create(Path directory, StoreGeometry geometry, WriteLatencyModel latency, String group,
                                     MappingAdvice advice) {
        PmFileModes.prepareDirectory(directory, group);
        LogGeometry log = geometry.log();
        HopscotchTable table = HopscotchTable.create(directory.resolve(TABLE_FILE), geometry.table(), latency, advice,
                geometry.heads(), log.regionSize(), log.segmentSize());
        HeadRecords records = HeadRecords.create(directory.resolve(HeadRecords.FILE), geometry.heads(), latency);
        RegionPool pool = new RegionPool(directory);
        List<LogHead> heads = new ArrayList<>();
        for (int head = 0; head < geometry.heads(); head++) {
            heads.add(new LogHead(head, log, new LogHead.ChainRegions(0, List.of(), List.of()), null,
                    regionCreator(directory, head, log, latency, advice, pool)));
        }
        return new PmDirectory(directory, geometry, table, records, heads, pool);
    }

    /** Opens an existing store of its owner only ({@link #open(Path, StoreGeometry, WriteLatencyModel, String)}). */
    public static PmDirectory open(Path directory, StoreGeometry expected, WriteLatencyModel latency) {
        return open(directory, expected, latency, null);
    }

    /**
     * Opens an existing store, refusing one whose geometry differs from {@code expected}, and one whose directory or
     * files another user could write ({@link PmFileModes}): group-writable is accepted only for {@code group} (null:
     * none).
     */
    public static PmDirectory open(Path directory, StoreGeometry expected, WriteLatencyModel latency, String group) {
        return open(directory, expected, latency, group, MappingAdvice.NONE);
    }

    /**
     * {@link #open(Path, StoreGeometry, WriteLatencyModel, String)} with {@code advice} applied to the mappings of the
     * table and of every log region, those made later included.
     */
    public static PmDirectory open(Path directory, StoreGeometry expected, WriteLatencyModel latency, String group,
                                   MappingAdvice advice) {
        PmFileModes.checkDirectory(directory, group);
        HopscotchTable table = HopscotchTable.open(directory.resolve(TABLE_FILE), latency, advice);
        List<LogHead> heads = new ArrayList<>();
        HeadRecords records = null;
        try {
            if (!table.geometry().equals(expected.table())) {
                throw new PmFormatException(directory.resolve(TABLE_FILE) + ": table geometry " + table.geometry()
                        + ", expected " + expected.table());
            }
            LogGeometry log = expected.log();
            PmRegion tableFile = table.region();
            tableFile.requireGeometry(HopscotchTable.FIRST_OWNER_SLOT, "head count", expected.heads());
            tableFile.requireGeometry(HopscotchTable.FIRST_OWNER_SLOT + 1, "region size", log.regionSize());
            tableFile.requireGeometry(HopscotchTable.FIRST_OWNER_SLOT + 2, "segment size", log.segmentSize());
            records = HeadRecords.open(directory.resolve(HeadRecords.FILE), expected.heads(), latency);
            RegionPool.deleteLeftovers(directory); // never part of a chain (see RegionPool)
            RegionPool pool = new RegionPool(directory);
            List<List<Path>> files = regionFiles(directory, expected.heads());
            for (int head = 0; head < expected.heads(); head++) {
                heads.add(openHead(head, files.get(head), records, log,
                        regionCreator(directory, head, log, latency, advice, pool), latency, advice));
            }
            return new PmDirectory(directory, expected, table, records, heads, pool);
        } catch (RuntimeException e) {
            heads.forEach(LogHead::close);
            if (records != null) {
                records.close();
            }
            table.close();
            throw e;
        }
    }

    /** Whether {@code directory} holds a store (its table file). */
    public static boolean exists(Path directory) {
        return Files.exists(directory.resolve(TABLE_FILE));
    }

    /**
     * The geometry recorded in an existing store's headers, read without opening the store (so an
     * offline tool or a server without geometry options can open it as it was created).
     */
    public static StoreGeometry storedGeometry(Path directory) {
        TableGeometry tableGeometry;
        int heads;
        long regionSize;
        long segmentSize;
        try (PmRegion tableFile = PmRegion.open(directory.resolve(TABLE_FILE), PmFileHeader.KIND_TABLE, WriteLatencyModel.OFF)) {
            tableGeometry = HopscotchTable.storedGeometry(tableFile);
            heads = Math.toIntExact(tableFile.geometry(HopscotchTable.FIRST_OWNER_SLOT));
            regionSize = tableFile.geometry(HopscotchTable.FIRST_OWNER_SLOT + 1);
            segmentSize = tableFile.geometry(HopscotchTable.FIRST_OWNER_SLOT + 2);
        }
        long granule = LogGeometry.DEFAULT_HIGH_WATER_GRANULE;
        // any region file will do: after a cleaning, slot 0 may hold none
        List<Path> firstHead = regionFiles(directory, heads).get(0);
        if (!firstHead.isEmpty()) {
            try (PmRegion region = PmRegion.open(firstHead.get(0), PmFileHeader.KIND_LOG_REGION, WriteLatencyModel.OFF)) {
                granule = region.geometry(3);
            }
        }
        return new StoreGeometry(heads, tableGeometry, new LogGeometry(regionSize, segmentSize, granule));
    }

    /** Opens the regions of one head and sorts them into chains by the head record (see class comment). */
    private static LogHead openHead(int head, List<Path> files, HeadRecords records, LogGeometry log,
                                    LogHead.RegionFactory factory, WriteLatencyModel latency, MappingAdvice advice) {
        CleaningPhase phase = records.phase(head);
        int generation = records.generation(head);
        java.util.Map<Integer, java.util.TreeMap<Long, PmRegion>> byGeneration = new java.util.HashMap<>();
        List<PmRegion> stray = new ArrayList<>();
        try {
            for (Path file : files) {
                PmRegion region = openRegion(file, head, log, latency, advice);
                int chain = (int) region.geometry(GEOMETRY_GENERATION);
                boolean kept = chain == generation || (chain == generation + 1 && phase.hasNewChain());
                if (!kept) {
                    stray.add(region);
                } else if (byGeneration.computeIfAbsent(chain, g -> new java.util.TreeMap<>())
                        .putIfAbsent(region.geometry(GEOMETRY_POSITION), region) != null) {
                    stray.add(region);
                    throw new PmFormatException(file + ": position " + region.geometry(GEOMETRY_POSITION) + " of chain "
                            + chain + " of head " + head + " is held by another region file too");
                }
            }
            LogHead.ChainRegions current = chainRegions(head, generation, byGeneration.remove(generation), log);
            LogHead.ChainRegions next = phase.hasNewChain()
                    ? chainRegions(head, generation + 1, byGeneration.remove(generation + 1), log) : null;
            for (PmRegion region : stray) {
                LogHead.zeroAndDelete(region); // a region of no chain ([recycled-memory])
            }
            if (phase == CleaningPhase.RETIRE) {
                records.set(head, CleaningPhase.IDLE, generation); // the old chain is gone: [recycled-memory] done
            }
            return new LogHead(head, log, current, next, factory);
        } catch (RuntimeException e) {
            stray.forEach(PmRegion::close);
            byGeneration.values().forEach(chain -> chain.values().forEach(PmRegion::close));
            throw e;
        }
    }

    private static LogHead.ChainRegions chainRegions(int head, int generation, java.util.TreeMap<Long, PmRegion> byPosition,
                                                     LogGeometry log) {
        List<Integer> slots = new ArrayList<>();
        List<PmRegion> regions = new ArrayList<>();
        if (byPosition != null) {
            for (var e : byPosition.entrySet()) {
                if (e.getKey() != regions.size()) {
                    throw new PmFormatException(e.getValue().path() + ": region index " + e.getKey() + ", expected "
                            + regions.size() + " (regions of a chain are numbered without gaps; head " + head
                            + ", chain generation " + Integer.toUnsignedString(generation) + ")");
                }
                slots.add((int) e.getValue().geometry(GEOMETRY_SLOT));
                regions.add(e.getValue());
            }
        }
        return new LogHead.ChainRegions(generation, slots, regions);
    }

    private static PmRegion openRegion(Path file, int head, LogGeometry log, WriteLatencyModel latency,
                                       MappingAdvice advice) {
        PmRegion region = PmRegion.open(file, PmFileHeader.KIND_LOG_REGION, latency, advice);
        try {
            region.requireGeometry(0, "head id", head);
            Matcher name = REGION_FILE.matcher(file.getFileName().toString());
            region.requireGeometry(GEOMETRY_SLOT, "slot", name.matches() ? Integer.parseInt(name.group(2)) : -1);
            region.requireGeometry(2, "segment size", log.segmentSize());
            region.requireGeometry(3, "high-water granule", log.highWaterGranule());
            PmFormatException.requireEqual(file, "region size", region.dataLength(), log.regionSize());
            return region;
        } catch (RuntimeException e) {
            region.close();
            throw e;
        }
    }

    /** Each head's region files in {@code directory}, by name (slot order), read from the listing alone. */
    public static List<List<Path>> regionFiles(Path directory, int headCount) {
        List<List<Path>> files = new ArrayList<>();
        for (int head = 0; head < headCount; head++) {
            files.add(new ArrayList<>());
        }
        try (Stream<Path> listing = Files.list(directory)) {
            for (Path file : listing.sorted().toList()) {
                Matcher m = REGION_FILE.matcher(file.getFileName().toString());
                if (!m.matches()) {
                    continue;
                }
                int head = Integer.parseInt(m.group(1));
                if (head >= headCount) {
                    throw new PmFormatException(file + ": head " + head + " but the store has " + headCount + " heads");
                }
                files.get(head).add(file);
            }
        } catch (IOException e) {
            throw new UncheckedIOException("cannot list store directory " + directory, e);
        }
        return files;
    }

    /** Makes a head's regions from the pool when it holds one, else as new files; gives retired ones to the pool. */
    private static LogHead.RegionFactory regionCreator(Path directory, int head, LogGeometry log, WriteLatencyModel latency,
                                                       MappingAdvice advice, RegionPool pool) {
        return new LogHead.RegionFactory() {
            @Override
            public PmRegion create(int slot, int generation, int position) {
                Path name = directory.resolve(regionFileName(head, slot));
                long[] header = {head, slot, log.segmentSize(), log.highWaterGranule(), Integer.toUnsignedLong(generation),
                        position};
                return pool.take(name, header, () -> PmRegion.create(name, PmFileHeader.KIND_LOG_REGION, log.regionSize(),
                        header, latency, advice));
            }

            @Override
            public void recycle(PmRegion zeroed) {
                pool.give(zeroed);
            }
        };
    }

    public Path directory() {
        return directory;
    }

    public StoreGeometry geometry() {
        return geometry;
    }

    public HopscotchTable table() {
        return table;
    }

    /** Retired log regions kept zeroed for reuse (none until its capacity is set). */
    public RegionPool regionPool() {
        return pool;
    }

    /** Each head's durable record: served chain generation and cleaning phase. */
    public HeadRecords headRecords() {
        return records;
    }

    public LogHead head(int headId) {
        if (headId < 0 || headId >= heads.size()) {
            throw new IllegalArgumentException("head " + headId + " outside [0, " + heads.size() + ")");
        }
        return heads.get(headId);
    }

    public List<LogHead> heads() {
        return heads;
    }

    /** The head array for clients (paper §3.3), without remote keys. */
    public List<HeadDescriptor> headDescriptors() {
        return heads.stream().map(LogHead::describe).toList();
    }

    /** Bytes written zeroing retired log regions ([recycled-memory]), part of {@link #localBytesWritten}. */
    public long retiredZeroedBytes() {
        return heads.stream().mapToLong(LogHead::retiredZeroedBytes).sum();
    }

    /** Bytes the server stored into the table and every region through core (remote writes excluded). */
    public long localBytesWritten() {
        return table.region().localBytesWritten() + heads.stream().mapToLong(LogHead::localBytesWritten).sum();
    }

    /** Unmaps everything. No clean-shutdown marker is needed: open recovers the same way after a crash. */
    @Override
    public void close() {
        pool.close(); // first: what the heads give back on close is deleted
        heads.forEach(LogHead::close);
        records.close();
        table.close();
    }

    /** Default geometry (1 GiB regions, 8 MiB segments, H = 32) for a table of at least {@code capacity} keys. */
    public static StoreGeometry defaultGeometry(int heads, long capacity) {
        return new StoreGeometry(heads, TableGeometry.forCapacity(capacity, HopscotchTable.DEFAULT_NEIGHBOURHOOD),
                LogGeometry.defaults());
    }
}
