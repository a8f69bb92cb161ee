package io.erda.core.log;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.erda.core.PmDirectory;
import io.erda.core.StoreGeometry;
import io.erda.core.pm.PmRegion;
import io.erda.core.pm.PowerFailure;
import io.erda.core.pm.WriteLatencyModel;
import io.erda.core.testing.ShmTempDirFactory;
import io.erda.protocol.memory.LogGeometry;
import io.erda.protocol.memory.TableGeometry;
import java.io.IOException;
import java.lang.foreign.MemorySegment;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Retired regions kept zeroed and mapped for reuse ([recycled-memory], {@link RegionPool}): what a reused region
 * holds, under which name, what a full pool does, and what open makes of pool files a crash left.
 */
class RegionPoolTest {
    static final StoreGeometry STORE = new StoreGeometry(2, TableGeometry.forCapacity(256, 32), LogHeadTest.SMALL);

    @TempDir(factory = ShmTempDirFactory.class)
    Path dir;

    /** Fills {@code regions} regions of head's write chain, one 8 KiB object per segment. */
    private static void fill(LogHead head, int regions) {
        for (int i = 0; i < regions * 4; i++) {
            LogHeadTest.put(head, "k" + i, 8 * 1024);
        }
    }

    /** The cleaner's chain changes up to the switch (no copies): returns the old chain, still the head's to retire. */
    private static LogChain switchOver(LogHead head) {
        head.beginNewChain();
        head.redirectWritesToNewChain();
        return head.switchToNewChain();
    }

    /** Cleans a head the way the cleaner's chain changes go (no copies): returns the retired regions' mappings. */
    private static List<MemorySegment> cleanAndRetire(LogHead head) {
        LogChain old = switchOver(head);
        List<MemorySegment> mappings = old.regions().stream().map(PmRegion::data).toList();
        head.retire(old);
        return mappings;
    }

    /** A new store whose pool keeps up to four regions. */
    private PmDirectory pooledStore() {
        PmDirectory store = PmDirectory.create(dir, STORE, WriteLatencyModel.OFF);
        store.regionPool().capacity(4);
        return store;
    }

    private List<String> poolFiles() throws IOException {
        try (Stream<Path> files = Files.list(dir)) {
            return files.map(f -> f.getFileName().toString()).filter(n -> n.startsWith("pool-")).sorted().toList();
        }
    }

    private static boolean allZero(MemorySegment data) {
        return data.mismatch(MemorySegment.ofArray(new byte[(int) data.byteSize()])) == -1;
    }

    /**
     * What tells a reservation's caller that it grew a chain (so the server registers the new region before it hands
     * out an address in it): {@link LogHead#regionsAppended}, not {@link LogHead#regionCount}, which a retirement of the
     * same head, done without the caller's lock, can bring back to where it was.
     */
    @Test
    void aReservationThatGrewAChainIsSeenSoEvenWhenARetirementKeptTheRegionCount() {
        try (PmDirectory store = pooledStore()) {
            LogHead head = store.head(0);
            fill(head, 1);
            LogChain old = switchOver(head); // the old chain (one full region) and the new one: two regions
            fill(head, 1); // the new chain's first region full
            int countBefore = head.regionCount();
            long appendedBefore = head.regionsAppended();
            LogHeadTest.put(head, "grows", 8 * 1024); // the new chain's second region
            head.retire(old); // meanwhile, as a cleaner thread would: one region less
            assertThat(head.regionCount()).as("the count alone sees no growth").isEqualTo(countBefore);
            assertThat(head.regionsAppended()).isEqualTo(appendedBefore + 1);
        }
    }

    @Test
    void aRetiredRegionComesBackZeroedUnderItsNewNameInTheSameMemory() throws IOException {
        try (PmDirectory store = pooledStore()) {
            LogHead head0 = store.head(0);
            fill(head0, 2);
            List<MemorySegment> retired = cleanAndRetire(head0); // the new chain took slot 2; 0 and 1 retire
            assertThat(store.regionPool().size()).isEqualTo(2);
            assertThat(poolFiles()).containsExactly("pool-00000.pm", "pool-00001.pm");
            assertThat(dir.resolve(PmDirectory.regionFileName(0, 0))).doesNotExist();

            // head 1 grows a chain of two regions: the second comes from the pool (the first was made at create)
            LogHead head1 = store.head(1);
            fill(head1, 1);
            long offset = LogHeadTest.put(head1, "next", 8 * 1024);
            PmRegion reused = head1.resolve(offset).region();
            assertThat(store.regionPool().reused()).isEqualTo(1);
            assertThat(reused.path()).isEqualTo(dir.resolve(PmDirectory.regionFileName(1, 1)));
            assertThat(retired).anyMatch(m -> m.address() == reused.data().address());
            assertThat(reused.geometry(0)).as("head").isEqualTo(1);
            assertThat(reused.geometry(1)).as("slot").isEqualTo(1);
            assertThat(reused.geometry(5)).as("position in its chain").isEqualTo(1);
            assertThat(LogHead.highWater(reused)).isEqualTo(LogHeadTest.SMALL.highWaterGranule() * 3);
            // the old objects are gone: only the new one, after the segment header, is not zero
            MemorySegment data = reused.data();
            assertThat(allZero(data.asSlice(0, LogGeometry.SEGMENT_HEADER_LENGTH))).isTrue();
            assertThat(allZero(data.asSlice(LogHeadTest.SMALL.segmentSize()))).isTrue();
            assertThat(poolFiles()).hasSize(1);
        }
        // reopened: the reused region is an ordinary region of head 1, and the pool file left is deleted
        try (PmDirectory store = PmDirectory.open(dir, STORE, WriteLatencyModel.OFF)) {
            assertThat(poolFiles()).isEmpty();
            assertThat(store.head(1).currentChain().size()).isEqualTo(2);
            assertThat(store.regionPool().size()).isZero();
        }
    }

    @Test
    void aFullPoolDeletesWhatItCannotKeepAndNoCapacityKeepsNothing() throws IOException {
        try (PmDirectory store = PmDirectory.create(dir, STORE, WriteLatencyModel.OFF)) {
            LogHead head = store.head(0);
            fill(head, 2);
            cleanAndRetire(head);
            assertThat(store.regionPool().capacity()).as("until a server sets it").isZero();
            assertThat(poolFiles()).isEmpty();
            assertThat(store.regionPool().deleted()).isEqualTo(2);

            store.regionPool().capacity(1);
            fill(head, 3); // three full regions
            cleanAndRetire(head);
            assertThat(store.regionPool().size()).isEqualTo(1);
            assertThat(store.regionPool().deleted()).isEqualTo(4);
            assertThat(poolFiles()).hasSize(1);

            store.regionPool().capacity(0);
            assertThat(poolFiles()).isEmpty();
            assertThat(store.regionPool().deleted()).isEqualTo(5);
        }
        assertThat(poolFiles()).isEmpty();
    }

    /** A server closing interrupts its cleaner, maybe mid-rename: the rename completes and the store closes. */
    @Test
    void aRetireOnAnInterruptedThreadStillPoolsItsRegions() {
        try (PmDirectory store = pooledStore()) {
            LogHead head = store.head(0);
            fill(head, 2);
            LogChain old = switchOver(head);
            Thread.currentThread().interrupt();
            try {
                head.retire(old);
            } finally {
                assertThat(Thread.interrupted()).as("the interrupt is kept for the caller").isTrue();
            }
            assertThat(store.regionPool().size()).isEqualTo(2);
        }
    }

    /** A region the pool cannot rename is deleted and still leaves its head, which then closes. */
    @Test
    void aRegionThePoolCannotRenameIsDeletedAndLeavesItsHead() throws IOException {
        try (PmDirectory store = pooledStore()) {
            LogHead head = store.head(0);
            fill(head, 1);
            Files.write(dir.resolve("pool-00000.pm"), new byte[1]); // the name the pool will give it, taken
            LogChain old = switchOver(head);
            assertThatThrownBy(() -> head.retire(old)).hasMessageContaining("pool-00000.pm");
            assertThat(head.regions()).as("the new chain's region alone").hasSize(1);
            assertThat(dir.resolve(PmDirectory.regionFileName(0, 0))).doesNotExist();
        }
    }

    /**
     * A crash between the steps of a rename leaves a pool file, maybe a second name of a region's file, maybe an
     * image: open deletes the pool names and leaves the region whole.
     */
    @Test
    void openDeletesPoolFilesACrashLeftWithoutHarmingTheRegionsTheyShareAFileWith() throws IOException {
        try (PmDirectory store = PmDirectory.create(dir, STORE, WriteLatencyModel.OFF)) {
            LogHeadTest.put(store.head(0), "kept", 100);
        }
        Path region = dir.resolve(PmDirectory.regionFileName(0, 0));
        Files.createLink(dir.resolve("pool-00003.pm"), region); // linked under its new name, old one not yet removed
        Files.write(dir.resolve("pool-00004.pm" + PowerFailure.IMAGE_SUFFIX), new byte[64]);
        Files.write(dir.resolve("pool-00005.pm"), new byte[4096]); // header rewrite under the pool name cut short
        try (PmDirectory store = PmDirectory.open(dir, STORE, WriteLatencyModel.OFF)) {
            assertThat(poolFiles()).isEmpty();
            assertThat(store.head(0).tail()).isGreaterThan(LogGeometry.SEGMENT_HEADER_LENGTH);
            assertThat(region).exists();
        }
    }

    /** Under power-failure emulation the durable image follows its file to each new name, header included. */
    @Test
    void aRecycledRegionsImageFollowsItsFileAndACollapseKeepsTheNewHeader() {
        PowerFailure.enable(dir, "test");
        try (PmDirectory store = pooledStore()) {
            LogHead head0 = store.head(0);
            fill(head0, 2);
            cleanAndRetire(head0);
            assertThat(dir.resolve("pool-00000.pm" + PowerFailure.IMAGE_SUFFIX)).exists();
            assertThat(dir.resolve(PmDirectory.regionFileName(0, 0) + PowerFailure.IMAGE_SUFFIX)).doesNotExist();
            LogHead head1 = store.head(1);
            fill(head1, 1);
            LogHeadTest.put(head1, "next", 8 * 1024); // into the reused region at slot 1 of head 1
            assertThat(store.regionPool().reused()).isEqualTo(1);
            assertThat(dir.resolve(PmDirectory.regionFileName(1, 1) + PowerFailure.IMAGE_SUFFIX)).exists();
        }
        // what was made durable is the new header: the region opens as head 1's second, after any collapse
        PowerFailure.collapse(dir, 7, PowerFailure.Policy.DROP);
        try (PmDirectory store = PmDirectory.open(dir, STORE, WriteLatencyModel.OFF)) {
            assertThat(store.head(1).currentChain().slots()).containsExactly(0, 1);
            assertThat(dir.resolve("pool-00001.pm" + PowerFailure.IMAGE_SUFFIX)).doesNotExist();
        }
    }
}
