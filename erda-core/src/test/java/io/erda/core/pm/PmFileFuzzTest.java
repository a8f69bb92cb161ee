package io.erda.core.pm;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.code_intelligence.jazzer.junit.FuzzTest;
import io.erda.core.log.HeadRecords;
import io.erda.core.table.HopscotchTable;
import io.erda.protocol.memory.TableGeometry;
import io.erda.protocol.memory.Words;
import io.erda.protocol.testing.Fuzzing;
import java.io.IOException;
import java.io.RandomAccessFile;
import java.lang.foreign.MemorySegment;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.zip.CRC32C;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Test;

/**
 * docs/ARCHITECTURE.md, [bad-input]: a PM file's header as the store's openers meet it after a crash, a bad disk or
 * someone else's file: a real file on /dev/shm whose header page comes from the fuzzer, opened as a hash table
 * ({@link HopscotchTable#open}), as head records ({@link HeadRecords#open}) or as a bare log region
 * ({@link PmRegion#open}). A bad file throws {@link PmFormatException} naming the file, the value and what was
 * expected. Input: a selector byte (low bits: the opener; bit 7: recompute the header CRC, so the fuzzer gets past
 * it to the fields behind), then the header page (zero-padded to {@value PmFileHeader#LENGTH} bytes). The file's data
 * area is as long as the header's data length says when that is at most {@value #MAX_DATA} bytes (else empty).
 */
class PmFileFuzzTest {
    static final long MAX_DATA = 1 << 20;
    static final int HEADS = 4;
    private static Path dir;

    @FuzzTest
    void open(byte[] data) throws IOException {
        if (data.length == 0) {
            return;
        }
        byte[] header = header(data);
        long dataLength = MemorySegment.ofArray(header).get(Words.LONG_U, PmFileHeader.DATA_LENGTH_OFFSET);
        Path file = writeFile(header);
        try {
            switch ((data[0] & 0x7f) % 3) {
                case 0 -> {
                    try (HopscotchTable table = HopscotchTable.open(file, WriteLatencyModel.OFF)) {
                        assertThat(table.count()).isBetween(0L, table.geometry().bucketCount());
                    }
                }
                case 1 -> HeadRecords.open(file, HEADS, WriteLatencyModel.OFF).close();
                default -> {
                    try (PmRegion region = PmRegion.open(file, PmFileHeader.KIND_LOG_REGION, WriteLatencyModel.OFF)) {
                        assertThat(region.dataLength()).isEqualTo(dataLength);
                    }
                }
            }
        } catch (PmFormatException e) {
            assertThat(e.getMessage()).startsWith(file.toString());
            Fuzzing.rejected(e);
        }
    }

    /** The header page of an input: its bytes after the selector, zero-padded, the CRC recomputed if bit 7 asks. */
    private static byte[] header(byte[] data) {
        byte[] header = Arrays.copyOfRange(data, 1, 1 + PmFileHeader.LENGTH);
        if ((data[0] & 0x80) != 0) {
            CRC32C crc = new CRC32C();
            crc.update(header, 0, PmFileHeader.CRC_OFFSET);
            MemorySegment.ofArray(header).set(Words.INT_U, PmFileHeader.CRC_OFFSET, (int) crc.getValue());
        }
        return header;
    }

    /** Writes the file the openers meet: the header page, then a zeroed data area as long as the header says. */
    private static Path writeFile(byte[] header) throws IOException {
        if (dir == null) {
            dir = Files.createTempDirectory(Path.of("/dev/shm"), "erda-pm-fuzz-");
        }
        Path file = dir.resolve("file.pm");
        long dataLength = MemorySegment.ofArray(header).get(Words.LONG_U, PmFileHeader.DATA_LENGTH_OFFSET);
        try (RandomAccessFile f = new RandomAccessFile(file.toFile(), "rw")) {
            f.setLength(0);
            f.write(header);
            f.setLength(PmFileHeader.LENGTH + (dataLength >= 0 && dataLength <= MAX_DATA ? dataLength : 0));
        }
        return file;
    }

    @AfterAll
    static void removeFiles() throws IOException {
        if (dir != null) {
            Files.deleteIfExists(dir.resolve("file.pm"));
            Files.deleteIfExists(dir);
        }
    }

    // ---------------------------------------------------------------- seed corpus: headers the store writes

    static Map<String, byte[]> seeds() throws IOException {
        Path seedDir = Files.createTempDirectory(Path.of("/dev/shm"), "erda-pm-seeds-");
        try {
            Map<String, byte[]> seeds = new LinkedHashMap<>();
            Path table = seedDir.resolve("table.pm");
            HopscotchTable.create(table, TableGeometry.forCapacity(64, 32), WriteLatencyModel.OFF, HEADS, 1 << 20, 1 << 16)
                    .close();
            seeds.put("table", withSelector(0, table));
            Path heads = seedDir.resolve("heads.pm");
            HeadRecords.create(heads, HEADS, WriteLatencyModel.OFF).close();
            seeds.put("head-records", withSelector(1, heads));
            Path region = seedDir.resolve("region.pm");
            PmRegion.create(region, PmFileHeader.KIND_LOG_REGION, 1 << 16, new long[] {0, 0, 1 << 14, 4096, 1, 0},
                    WriteLatencyModel.OFF).close();
            seeds.put("log-region", withSelector(2, region));
            return seeds;
        } finally {
            try (var files = Files.list(seedDir)) {
                for (Path p : files.toList()) {
                    Files.delete(p);
                }
            }
            Files.delete(seedDir);
        }
    }

    /** The selector byte, then the file's header up to its last nonzero byte. */
    private static byte[] withSelector(int selector, Path file) throws IOException {
        byte[] header = Arrays.copyOf(Files.readAllBytes(file), PmFileHeader.LENGTH);
        int end = header.length;
        while (header[end - 1] == 0) {
            end--;
        }
        byte[] input = new byte[end + 1];
        input[0] = (byte) selector;
        System.arraycopy(header, 0, input, 1, end);
        return input;
    }

    @Test
    void aTableHeaderWithAValidCrcButAnImpossibleGeometryIsAFormatError() throws IOException {
        byte[] input = Arrays.copyOf(seeds().get("table"), 1 + PmFileHeader.LENGTH);
        input[0] = (byte) 0x80; // table, CRC recomputed
        MemorySegment.ofArray(input).set(Words.LONG_U, 1 + PmFileHeader.geometryOffset(0), 3); // slot 0: capacity
        Path file = writeFile(header(input));
        // The header passes every check of its own (magic, version, CRC, kind, lengths); only the table's geometry
        // check can refuse it, so the file must not open and the refusal must name the file and the capacity.
        assertThatThrownBy(() -> HopscotchTable.open(file, WriteLatencyModel.OFF).close())
                .isInstanceOf(PmFormatException.class)
                .hasMessageStartingWith(file + ": stored table geometry (capacity 3, ")
                .hasMessageContaining("is impossible");
    }

    @Test
    void seedCorpusIsWhatTheStoreWrites() throws IOException {
        Fuzzing.seedCorpus(PmFileFuzzTest.class, "open", seeds());
    }
}
