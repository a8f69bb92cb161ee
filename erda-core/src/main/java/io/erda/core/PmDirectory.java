package io.erda.core;

import io.erda.core.log.HeadDescriptor;
import io.erda.core.log.LogGeometry;
import io.erda.core.log.LogHead;
import io.erda.core.pm.PmFileHeader;
import io.erda.core.pm.PmFormatException;
import io.erda.core.pm.PmRegion;
import io.erda.core.pm.WriteLatencyModel;
import io.erda.core.table.HopscotchTable;
import io.erda.core.table.TableGeometry;
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
 * The PM layout of one store in a directory: {@code table.pm} and, per head, its chain of
 * {@code head-HHHHH-region-RRRRR.pm} files. Every file's header records the geometry; opening a
 * directory created with another format version or geometry fails naming found vs expected.
 *
 * <p>Header geometry slots: table 3 heads, 4 region size, 5 segment size (after the table's own);
 * region 0 head id, 1 region index, 2 segment size, 3 high-water granule (data length = region size).
 */
public final class PmDirectory implements AutoCloseable {
    public static final String TABLE_FILE = "table.pm";
    private static final Pattern REGION_FILE = Pattern.compile("head-(\\d{5})-region-(\\d{5})\\.pm");

    private final Path directory;
    private final StoreGeometry geometry;
    private final HopscotchTable table;
    private final List<LogHead> heads;

    private PmDirectory(Path directory, StoreGeometry geometry, HopscotchTable table, List<LogHead> heads) {
        this.directory = directory;
        this.geometry = geometry;
        this.table = table;
        this.heads = List.copyOf(heads);
    }

    /** File name of region {@code regionIndex} of head {@code headId}. */
    public static String regionFileName(int headId, int regionIndex) {
        return String.format("head-%05d-region-%05d.pm", headId, regionIndex);
    }

    /** Creates a new store in {@code directory} (created if missing; must not already hold a table). */
    public static PmDirectory create(Path directory, StoreGeometry geometry, WriteLatencyModel latency) {
        try {
            Files.createDirectories(directory);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot create store directory " + directory, e);
        }
        LogGeometry log = geometry.log();
        HopscotchTable table = HopscotchTable.create(directory.resolve(TABLE_FILE), geometry.table(), latency,
                geometry.heads(), log.regionSize(), log.segmentSize());
        List<LogHead> heads = new ArrayList<>();
        for (int head = 0; head < geometry.heads(); head++) {
            heads.add(new LogHead(head, log, List.of(), regionCreator(directory, head, log, latency)));
        }
        return new PmDirectory(directory, geometry, table, heads);
    }

    /** Opens an existing store, refusing one whose geometry differs from {@code expected}. */
    public static PmDirectory open(Path directory, StoreGeometry expected, WriteLatencyModel latency) {
        HopscotchTable table = HopscotchTable.open(directory.resolve(TABLE_FILE), latency);
        List<LogHead> heads = new ArrayList<>();
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
            List<List<Path>> files = regionFiles(directory, expected.heads());
            for (int head = 0; head < expected.heads(); head++) {
                List<PmRegion> regions = new ArrayList<>();
                for (int index = 0; index < files.get(head).size(); index++) {
                    regions.add(openRegion(files.get(head).get(index), head, index, log, latency));
                }
                heads.add(new LogHead(head, log, regions, regionCreator(directory, head, log, latency)));
            }
            return new PmDirectory(directory, expected, table, heads);
        } catch (RuntimeException e) {
            heads.forEach(LogHead::close);
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
        Path firstRegion = directory.resolve(regionFileName(0, 0));
        if (Files.exists(firstRegion)) {
            try (PmRegion region = PmRegion.open(firstRegion, PmFileHeader.KIND_LOG_REGION, WriteLatencyModel.OFF)) {
                granule = region.geometry(3);
            }
        }
        return new StoreGeometry(heads, tableGeometry, new LogGeometry(regionSize, segmentSize, granule));
    }

    private static PmRegion openRegion(Path file, int head, int index, LogGeometry log, WriteLatencyModel latency) {
        PmRegion region = PmRegion.open(file, PmFileHeader.KIND_LOG_REGION, latency);
        try {
            region.requireGeometry(0, "head id", head);
            region.requireGeometry(1, "region index", index);
            region.requireGeometry(2, "segment size", log.segmentSize());
            region.requireGeometry(3, "high-water granule", log.highWaterGranule());
            PmFormatException.requireEqual(file, "region size", region.dataLength(), log.regionSize());
            return region;
        } catch (RuntimeException e) {
            region.close();
            throw e;
        }
    }

    /** Region files per head, checked to be numbered 0..n-1 without gaps. */
    private static List<List<Path>> regionFiles(Path directory, int headCount) {
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
                int index = Integer.parseInt(m.group(2));
                if (head >= headCount) {
                    throw new PmFormatException(file + ": head " + head + " but the store has " + headCount + " heads");
                }
                if (index != files.get(head).size()) {
                    throw new PmFormatException(file + ": region index " + index + ", expected " + files.get(head).size()
                            + " (regions of a chain are numbered without gaps)");
                }
                files.get(head).add(file);
            }
        } catch (IOException e) {
            throw new UncheckedIOException("cannot list store directory " + directory, e);
        }
        return files;
    }

    private static java.util.function.IntFunction<PmRegion> regionCreator(Path directory, int head, LogGeometry log,
                                                                         WriteLatencyModel latency) {
        return index -> PmRegion.create(directory.resolve(regionFileName(head, index)), PmFileHeader.KIND_LOG_REGION,
                log.regionSize(), new long[] {head, index, log.segmentSize(), log.highWaterGranule()}, latency);
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

    /** Bytes the server stored into the table and every region through core (remote writes excluded). */
    public long localBytesWritten() {
        return table.region().localBytesWritten() + heads.stream().mapToLong(LogHead::localBytesWritten).sum();
    }

    /** Unmaps everything. No clean-shutdown marker is needed: open recovers the same way after a crash. */
    @Override
    public void close() {
        heads.forEach(LogHead::close);
        table.close();
    }

    /** Default geometry (1 GiB regions, 8 MiB segments, H = 32) for a table of at least {@code capacity} keys. */
    public static StoreGeometry defaultGeometry(int heads, long capacity) {
        return new StoreGeometry(heads, TableGeometry.forCapacity(capacity, HopscotchTable.DEFAULT_NEIGHBOURHOOD),
                LogGeometry.defaults());
    }
}
