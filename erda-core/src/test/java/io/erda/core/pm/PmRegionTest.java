package io.erda.core.pm;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.IOException;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class PmRegionTest {
    @TempDir
    Path dir;

    private PmRegion create(String name) {
        return PmRegion.create(dir.resolve(name), PmFileHeader.KIND_LOG_REGION, 64 * 1024, new long[] {7, 3}, WriteLatencyModel.OFF);
    }

    @Test
    void dataWrittenThroughTheMappingIsInTheFileAtTheAdvertisedOffset() throws IOException {
        try (PmRegion region = create("r.pm")) {
            region.setLongRelease(128, 0x1122_3344_5566_7788L);
            region.persist(128, 8);
            ByteBuffer buffer = ByteBuffer.allocate(8).order(ByteOrder.LITTLE_ENDIAN);
            try (FileChannel channel = FileChannel.open(region.path(), StandardOpenOption.READ)) {
                channel.read(buffer, region.dataFileOffset() + 128);
            }
            assertThat(buffer.getLong(0)).isEqualTo(0x1122_3344_5566_7788L);
            assertThat(region.mapping().byteSize()).isEqualTo(region.dataFileOffset() + region.dataLength());
            assertThat(region.data().address() - region.mapping().address()).isEqualTo(region.dataFileOffset());
        }
    }

    /**
     * A new file is extended sparse, unless the mapping advice allocates new files ({@link MappingAdvice#allocatesNewFiles}):
     * then every byte is written before the file is mapped, and the advice sees a file that holds its whole length.
     */
    @Test
    void aNewFileIsAllocatedWholeBeforeItIsMappedOnlyIfTheAdviceAsks() throws IOException {
        long dataLength = 6L << 20; // three chunks of the zeros written, the last one short by the header
        long[] blocksWhenMapped = new long[1];
        MappingAdvice allocating = new MappingAdvice() {
            @Override
            public void mapped(Path path, MemorySegment mapping) {
                blocksWhenMapped[0] = allocatedBytes(PmRegion.temporaryName(path)); // mapped before it is published
            }

            @Override
            public boolean allocatesNewFiles() {
                return true;
            }
        };
        try (PmRegion sparse = PmRegion.create(dir.resolve("sparse.pm"), PmFileHeader.KIND_LOG_REGION, dataLength,
                new long[] {1}, WriteLatencyModel.OFF);
             PmRegion whole = PmRegion.create(dir.resolve("whole.pm"), PmFileHeader.KIND_LOG_REGION, dataLength,
                new long[] {1}, WriteLatencyModel.OFF, allocating)) {
            long fileLength = whole.dataFileOffset() + dataLength;
            assertThat(allocatedBytes(sparse.path())).isLessThan(1L << 20);
            assertThat(allocatedBytes(whole.path())).isGreaterThanOrEqualTo(fileLength);
            assertThat(blocksWhenMapped[0]).as("allocated before the advice saw the mapping").isGreaterThanOrEqualTo(fileLength);
            assertThat(whole.data().asSlice(0, dataLength).mismatch(MemorySegment.ofArray(new byte[(int) dataLength])))
                    .as("the data reads as zeros").isEqualTo(-1);
        }
        try (PmRegion reopened = PmRegion.open(dir.resolve("whole.pm"), PmFileHeader.KIND_LOG_REGION, WriteLatencyModel.OFF)) {
            assertThat(reopened.dataLength()).isEqualTo(dataLength);
        }
    }

    /** Bytes the file system allocated for {@code file} (stat's blocks): a sparse file holds fewer than its length. */
    private static long allocatedBytes(Path file) {
        try {
            Process stat = new ProcessBuilder("stat", "--format=%b %B", file.toString()).redirectErrorStream(true).start();
            String[] out = new String(stat.getInputStream().readAllBytes()).trim().split(" ");
            assertThat(stat.waitFor()).as(String.join(" ", out)).isZero();
            return Long.parseLong(out[0]) * Long.parseLong(out[1]);
        } catch (IOException e) {
            throw new java.io.UncheckedIOException(e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        }
    }

    /**
     * A thread whose interrupt is pending (the JVM sets one now and then: a shared arena closed while the thread read
     * a segment of it) still creates and opens regions, and keeps its interrupt.
     */
    @Test
    void aPendingInterruptNeitherFailsCreateAndOpenNorIsLost() {
        Thread.currentThread().interrupt();
        try {
            try (PmRegion made = create("interrupted.pm")) {
                made.setLongRelease(0, 42);
                made.persist(0, 8);
            }
            try (PmRegion opened = PmRegion.open(dir.resolve("interrupted.pm"), PmFileHeader.KIND_LOG_REGION, WriteLatencyModel.OFF)) {
                assertThat(opened.data().get(ValueLayout.JAVA_LONG_UNALIGNED, 0)).isEqualTo(42);
            }
            assertThat(Thread.currentThread().isInterrupted()).as("the caller's interrupt is kept").isTrue();
        } finally {
            Thread.interrupted();
        }
    }

    /**
     * persist writes back (msync) where a device is behind the file, and is a fence only where the file lives in memory
     * (tmpfs: msync has nothing to write there); data persisted either way is what the file reads.
     */
    @Test
    void persistWritesBackOnADiskFileSystemAndNotOnTmpfs() throws IOException {
        Path shm = Path.of("/dev/shm");
        org.junit.jupiter.api.Assumptions.assumeTrue(Files.isDirectory(shm) && Files.getFileStore(shm).type()
                .equals("tmpfs") && !Files.getFileStore(dir).type().equals("tmpfs"), "needs /dev/shm on tmpfs and the "
                + "temporary directory on another file system (here: " + Files.getFileStore(dir).type() + ")");
        Path memoryDir = Files.createTempDirectory(shm, "pmregion-test-");
        try {
            for (Path where : new Path[] {dir, memoryDir}) {
                try (PmRegion region = PmRegion.create(where.resolve("w.pm"), PmFileHeader.KIND_LOG_REGION, 64 * 1024,
                        new long[] {7, 3}, WriteLatencyModel.OFF)) {
                    assertThat(region.writesBack()).as("%s (%s)", where, Files.getFileStore(where).type())
                            .isEqualTo(where == dir);
                    region.setLongRelease(256, 0x0102_0304_0506_0708L);
                    region.persist(256, 8);
                    region.setMutableWord(0, 99);
                    ByteBuffer buffer = ByteBuffer.allocate(8).order(ByteOrder.LITTLE_ENDIAN);
                    try (FileChannel channel = FileChannel.open(region.path(), StandardOpenOption.READ)) {
                        channel.read(buffer, region.dataFileOffset() + 256);
                    }
                    assertThat(buffer.getLong(0)).isEqualTo(0x0102_0304_0506_0708L);
                    assertThat(region.mutableWord(0)).isEqualTo(99);
                }
            }
        } finally {
            try (var files = Files.list(memoryDir)) {
                for (Path f : files.toList()) {
                    Files.delete(f);
                }
            }
            Files.delete(memoryDir);
        }
    }

    @Test
    void reopenedRegionKeepsDataAndGeometry() {
        try (PmRegion region = create("r.pm")) {
            region.write(0, MemorySegment.ofArray(new byte[] {1, 2, 3, 4, 5, 6, 7, 8}));
            region.persist(0, 8);
        }
        try (PmRegion region = PmRegion.open(dir.resolve("r.pm"), PmFileHeader.KIND_LOG_REGION, WriteLatencyModel.OFF)) {
            assertThat(region.data().get(ValueLayout.JAVA_BYTE, 7)).isEqualTo((byte) 8);
            assertThat(region.geometry(0)).isEqualTo(7);
            assertThat(region.geometry(1)).isEqualTo(3);
            assertThat(region.dataLength()).isEqualTo(64 * 1024);
        }
    }

    @Test
    void countsEveryByteStoredThroughItsApi() {
        try (PmRegion region = create("r.pm")) {
            long before = region.localBytesWritten();
            region.setLongRelease(0, 1);
            region.write(64, MemorySegment.ofArray(new byte[40]));
            region.recordWrite(256, 16);
            region.setMutableWord(0, 5);
            assertThat(region.localBytesWritten() - before).isEqualTo(8 + 40 + 16 + 8);
        }
    }

    @Test
    void wrongMagicIsRefusedNamingFoundAndExpected() throws IOException {
        Path file = dir.resolve("junk.pm");
        Files.write(file, new byte[PmFileHeader.LENGTH + 64]);
        assertThatThrownBy(() -> PmRegion.open(file, PmFileHeader.KIND_LOG_REGION, WriteLatencyModel.OFF))
                .isInstanceOf(PmFormatException.class)
                .hasMessageContaining("magic 0x0000000000000000, expected 0x01004d5041445245");
    }

    @Test
    void otherFormatVersionIsRefusedNamingBoth() throws IOException {
        create("r.pm").close();
        patchInt(dir.resolve("r.pm"), PmFileHeader.VERSION_OFFSET, 9);
        assertThatThrownBy(() -> PmRegion.open(dir.resolve("r.pm"), PmFileHeader.KIND_LOG_REGION, WriteLatencyModel.OFF))
                .isInstanceOf(PmFormatException.class).hasMessageContaining("format version 9, expected 1");
    }

    @Test
    void corruptGeometryIsCaughtByTheHeaderChecksum() throws IOException {
        create("r.pm").close();
        patchInt(dir.resolve("r.pm"), PmFileHeader.GEOMETRY_OFFSET, 8);
        assertThatThrownBy(() -> PmRegion.open(dir.resolve("r.pm"), PmFileHeader.KIND_LOG_REGION, WriteLatencyModel.OFF))
                .isInstanceOf(PmFormatException.class).hasMessageContaining("header CRC");
    }

    @Test
    void wrongKindAndGeometryAreRefusedNamingBoth() {
        create("r.pm").close();
        assertThatThrownBy(() -> PmRegion.open(dir.resolve("r.pm"), PmFileHeader.KIND_TABLE, WriteLatencyModel.OFF))
                .hasMessageContaining("file kind 2, expected 1");
        try (PmRegion region = PmRegion.open(dir.resolve("r.pm"), PmFileHeader.KIND_LOG_REGION, WriteLatencyModel.OFF)) {
            assertThatThrownBy(() -> region.requireGeometry(0, "segment size", 8))
                    .isInstanceOf(PmFormatException.class).hasMessageContaining("segment size 7, expected 8");
        }
    }

    @Test
    void existingFileIsNeverOverwrittenByCreate() {
        create("r.pm").close();
        assertThatThrownBy(() -> create("r.pm")).hasMessageContaining("r.pm");
    }

    /**
     * A crash while a file is being created (a server stopped mid-cleaning left an empty region file, which verify
     * refused) leaves at most a temporary file: the real name appears only whole, and the next create replaces it.
     */
    @Test
    void aFileAppearsUnderItsNameOnlyWholeAndACrashedCreateLeavesNothingInTheWay() throws IOException {
        Path target = dir.resolve("r.pm");
        Files.createFile(PmRegion.temporaryName(target)); // what a crash right after the file was opened leaves
        assertThat(target).doesNotExist();
        create("r.pm").close();
        assertThat(PmRegion.temporaryName(target)).doesNotExist();
        try (var files = Files.list(dir)) {
            assertThat(files.map(f -> f.getFileName().toString())).containsExactly("r.pm");
        }
        PmRegion.open(target, PmFileHeader.KIND_LOG_REGION, WriteLatencyModel.OFF).close();
    }

    @Test
    void zeroForReuseClearsDataAndMutableWords() {
        try (PmRegion region = create("r.pm")) {
            region.write(1000, MemorySegment.ofArray(new byte[] {9, 9, 9, 9, 9, 9, 9, 9}));
            region.setMutableWord(1, 77);
            region.zeroForReuse();
            assertThat(region.data().asSlice(0, 2048).toArray(ValueLayout.JAVA_BYTE)).containsOnly(0);
            assertThat(region.mutableWord(1)).isZero();
        }
    }

    @Test
    void latencyModelChargesPerTouchedCacheLine() {
        assertThat(WriteLatencyModel.cacheLines(0, 8)).isEqualTo(1);
        assertThat(WriteLatencyModel.cacheLines(60, 8)).isEqualTo(2);
        assertThat(WriteLatencyModel.cacheLines(0, 129)).isEqualTo(3);
        assertThat(WriteLatencyModel.cacheLines(5, 0)).isZero();
        assertThatThrownBy(() -> new WriteLatencyModel(-1)).hasMessageContaining("-1");
    }

    /**
     * A bulk write (the cleaner zeroing a region) waits its whole modelled delay asleep: spinning would take a core
     * from the requests on a small machine (WriteLatencyModel's comment).
     */
    @Test
    void latencyModelSleepsThroughABulkWritesDelay() {
        WriteLatencyModel model = new WriteLatencyModel(150);
        long lines = 200_000; // 30 ms
        assertThat(150 * lines).isGreaterThan(WriteLatencyModel.SLEEP_FROM_NANOS);
        java.lang.management.ThreadMXBean threads = java.lang.management.ManagementFactory.getThreadMXBean();
        long cpu = threads.getCurrentThreadCpuTime();
        long start = System.nanoTime();
        model.charge(0, lines * WriteLatencyModel.CACHE_LINE);
        long wall = System.nanoTime() - start;
        long used = threads.getCurrentThreadCpuTime() - cpu;
        assertThat(wall).isGreaterThanOrEqualTo(150 * lines);
        assertThat(used).as("CPU time while the write waited %d ns", wall).isLessThan(wall / 2);
    }

    private static void patchInt(Path file, long offset, int value) throws IOException {
        try (FileChannel channel = FileChannel.open(file, StandardOpenOption.WRITE)) {
            channel.write(ByteBuffer.allocate(4).order(ByteOrder.LITTLE_ENDIAN).putInt(0, value), offset);
        }
    }
}
