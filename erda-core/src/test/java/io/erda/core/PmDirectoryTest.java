package io.erda.core;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.erda.core.log.HeadDescriptor;
import io.erda.core.pm.PmFormatException;
import io.erda.core.pm.WriteLatencyModel;
import io.erda.core.testing.ShmTempDirFactory;
import io.erda.protocol.memory.AtomicWord;
import io.erda.protocol.memory.LogGeometry;
import io.erda.protocol.memory.TableGeometry;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class PmDirectoryTest {
    static final StoreGeometry GEOMETRY = new StoreGeometry(3, TableGeometry.forCapacity(128, 32),
            new LogGeometry(32 * 1024, 8 * 1024, 4096));

    @TempDir(factory = ShmTempDirFactory.class)
    Path dir;

    @Test
    void reopenedStoreKeepsTableEntriesAndHeadChains() {
        try (PmDirectory store = PmDirectory.create(dir, GEOMETRY, WriteLatencyModel.OFF)) {
            long offset = store.head(2).reserve(64);
            store.table().insert(77, 2, AtomicWord.initial(offset / 8));
        }
        try (PmDirectory store = PmDirectory.open(dir, GEOMETRY, WriteLatencyModel.OFF)) {
            assertThat(store.table().count()).isEqualTo(1);
            assertThat(store.head(2).tail()).isGreaterThanOrEqualTo(72);
            assertThat(store.heads()).hasSize(3);
        }
    }

    @Test
    void headArrayNamesExistingFilesAndTheDataAreaOffset() {
        try (PmDirectory store = PmDirectory.create(dir, GEOMETRY, WriteLatencyModel.OFF)) {
            for (HeadDescriptor head : store.headDescriptors()) {
                HeadDescriptor.Region region = head.regions().get(0);
                assertThat(region.path()).exists().hasFileName(PmDirectory.regionFileName(head.headId(), 0));
                assertThat(region.dataFileOffset()).isEqualTo(4096);
                assertThat(region.dataLength()).isEqualTo(32 * 1024);
            }
        }
    }

    @Test
    void storeOfAnotherSegmentSizeIsRefusedNamingFoundAndExpected() {
        PmDirectory.create(dir, GEOMETRY, WriteLatencyModel.OFF).close();
        StoreGeometry other = new StoreGeometry(3, GEOMETRY.table(), new LogGeometry(32 * 1024, 16 * 1024, 4096));
        assertThatThrownBy(() -> PmDirectory.open(dir, other, WriteLatencyModel.OFF))
                .isInstanceOf(PmFormatException.class).hasMessageContaining("segment size 8192, expected 16384");
    }

    @Test
    void storeOfAnotherTableCapacityIsRefusedNamingFoundAndExpected() {
        PmDirectory.create(dir, GEOMETRY, WriteLatencyModel.OFF).close();
        StoreGeometry other = new StoreGeometry(3, TableGeometry.forCapacity(256, 32), GEOMETRY.log());
        assertThatThrownBy(() -> PmDirectory.open(dir, other, WriteLatencyModel.OFF))
                .isInstanceOf(PmFormatException.class).hasMessageContaining("capacity=128").hasMessageContaining("capacity=256");
    }

    @Test
    void missingRegionInAChainIsRefused() throws Exception {
        try (PmDirectory store = PmDirectory.create(dir, GEOMETRY, WriteLatencyModel.OFF)) {
            for (int i = 0; i < 5; i++) {
                store.head(0).reserve(8 * 1024 - 8); // one object per segment: 4 per region, 5th in region 1
            }
            for (int i = 0; i < 4; i++) {
                store.head(0).reserve(8 * 1024 - 8);
            }
        }
        Files.delete(dir.resolve(PmDirectory.regionFileName(0, 1)));
        assertThatThrownBy(() -> PmDirectory.open(dir, GEOMETRY, WriteLatencyModel.OFF))
                .isInstanceOf(PmFormatException.class).hasMessageContaining("region index 2, expected 1");
    }
}
