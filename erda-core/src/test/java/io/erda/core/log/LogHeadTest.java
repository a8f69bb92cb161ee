package io.erda.core.log;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.erda.core.PmDirectory;
import io.erda.core.StoreGeometry;
import io.erda.core.pm.WriteLatencyModel;
import io.erda.core.testing.ShmTempDirFactory;
import io.erda.protocol.memory.LogGeometry;
import io.erda.protocol.memory.ObjectLayout;
import io.erda.protocol.memory.TableGeometry;
import java.lang.foreign.MemorySegment;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class LogHeadTest {
    static final LogGeometry SMALL = new LogGeometry(64 * 1024, 16 * 1024, 4096);
    static final StoreGeometry STORE = new StoreGeometry(2, TableGeometry.forCapacity(256, 32), SMALL);

    @TempDir(factory = ShmTempDirFactory.class)
    Path dir;

    private PmDirectory store() {
        return PmDirectory.create(dir, STORE, WriteLatencyModel.OFF);
    }

    /** Writes a complete object at a reservation, as a client's WRITE would. */
    static long put(LogHead head, String key, int valueLength) {
        MemorySegment k = MemorySegment.ofArray(key.getBytes(StandardCharsets.UTF_8));
        long length = ObjectLayout.length((int) k.byteSize(), valueLength);
        long offset = head.reserve(length);
        ObjectLayout.encode(head.slice(offset, length), 0, k, MemorySegment.ofArray(new byte[valueLength]), false);
        return offset;
    }

    @Test
    void firstReservationSkipsTheSegmentHeaderSoChainOffsetZeroIsNeverAnObject() {
        try (PmDirectory store = store()) {
            assertThat(store.head(0).reserve(32)).isEqualTo(LogGeometry.SEGMENT_HEADER_LENGTH);
            assertThat(store.head(0).reserve(16)).isEqualTo(40);
        }
    }

    @Test
    void reservationThatDoesNotFitItsSegmentStartsTheNextSegment() {
        try (PmDirectory store = store()) {
            LogHead head = store.head(0);
            head.reserve(16 * 1024 - 8 - 16); // leaves 16 bytes in segment 0
            assertThat(head.reserve(24)).isEqualTo(16 * 1024 + 8);
        }
    }

    @Test
    void objectLargerThanASegmentIsRejectedNamingBothSizes() {
        try (PmDirectory store = store()) {
            assertThatThrownBy(() -> store.head(0).reserve(16 * 1024))
                    .isInstanceOf(IllegalArgumentException.class)
                    .hasMessageContaining("object length 16384 exceeds segment size 16384 minus segment header 8");
        }
    }

    @Test
    void fullRegionGetsASuccessorFileAndChainOffsetsStayContiguous() {
        try (PmDirectory store = store()) {
            LogHead head = store.head(1);
            long last = 0;
            for (int i = 0; i < 5; i++) {
                last = head.reserve(8 * 1024); // one per 16 KiB segment (8 + 2 * 8192 > 16384): 4 per region
            }
            assertThat(last).isEqualTo(64 * 1024 + 8);
            assertThat(head.resolve(last).regionIndex()).isEqualTo(1);
            assertThat(head.resolve(last).offsetInRegion()).isEqualTo(8);
            assertThat(Files.exists(dir.resolve(PmDirectory.regionFileName(1, 1)))).isTrue();
            HeadDescriptor described = head.describe();
            assertThat(described.regions()).extracting(HeadDescriptor.Region::regionIndex).containsExactly(0, 1);
            assertThat(described.regions().get(1).dataLength()).isEqualTo(64 * 1024);
        }
    }

    @Test
    void highWaterMarkCostsEightBytesPerGranuleNotPerReservation() {
        try (PmDirectory store = store()) {
            LogHead head = store.head(0);
            long before = head.localBytesWritten();
            for (int i = 0; i < 100; i++) {
                head.reserve(32); // 3208 bytes: all below the first 4 KiB granule
            }
            assertThat(head.localBytesWritten() - before).isEqualTo(8);
        }
    }

    @Test
    void tailAfterCrashIsPastEveryReservedByteEvenTornOnes() {
        List<long[]> reserved = new ArrayList<>();
        PmDirectory crashed = store(); // never closed: the process "dies" with it mapped
        LogHead head = crashed.head(0);
        for (int i = 0; i < 200; i++) {
            long length = 8L * (1 + i % 40);
            reserved.add(new long[] {head.reserve(length), length}); // reservations whose objects never arrive
        }
        long maxEnd = reserved.stream().mapToLong(r -> r[0] + r[1]).max().orElseThrow();
        try (PmDirectory reopened = PmDirectory.open(dir, STORE, WriteLatencyModel.OFF)) {
            LogHead recovered = reopened.head(0);
            assertThat(recovered.tail()).isGreaterThanOrEqualTo(maxEnd);
            assertThat(recovered.reserve(64)).isGreaterThanOrEqualTo(maxEnd);
            assertThat(reopened.head(1).tail()).isZero();
        } finally {
            crashed.close();
        }
    }

    @Test
    void scanVisitsEveryObjectInChainOrderAcrossSegmentsAndRegions() {
        try (PmDirectory store = store()) {
            LogHead head = store.head(0);
            List<Long> written = new ArrayList<>();
            for (int i = 0; i < 300; i++) {
                written.add(put(head, "key-" + i, 100 + i * 7 % 500));
            }
            List<Long> scanned = new ArrayList<>();
            LogScanner.scan(head, LogScanner.Mode.STOP_AT_INVALID, (offset, object) -> scanned.add(offset));
            assertThat(head.regions()).hasSizeGreaterThan(1);
            assertThat(scanned).containsExactlyElementsOf(written);
        }
    }

    @Test
    void tornObjectEndsItsSegmentUnlessTheScanResyncs() {
        try (PmDirectory store = store()) {
            LogHead head = store.head(0);
            long first = put(head, "a", 10);
            long torn = head.reserve(ObjectLayout.length(1, 50)); // client died before writing
            head.slice(torn, 8).fill((byte) 0x5A); // garbage header, lengths included
            long after = put(head, "c", 10);
            List<Long> stop = new ArrayList<>();
            LogScanner.scan(head, LogScanner.Mode.STOP_AT_INVALID, (offset, object) -> stop.add(offset));
            assertThat(stop).containsExactly(first);
            List<Long> resync = new ArrayList<>();
            LogScanner.scan(head, LogScanner.Mode.RESYNC, (offset, object) -> resync.add(offset));
            assertThat(resync).containsExactly(first, after);
        }
    }

    @Test
    void zeroedRegionHoldsNoObjectForAScanToFind() {
        try (PmDirectory store = store()) {
            LogHead head = store.head(0);
            put(head, "x", 10);
            head.regions().get(0).zeroForReuse();
            assertThat(LogScanner.scan(head, LogScanner.Mode.RESYNC, (offset, object) -> { })).isZero();
        }
    }
}
