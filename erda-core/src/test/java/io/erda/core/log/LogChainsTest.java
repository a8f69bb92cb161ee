package io.erda.core.log;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.erda.core.PmDirectory;
import io.erda.core.StoreGeometry;
import io.erda.core.pm.WriteLatencyModel;
import io.erda.core.testing.ShmTempDirFactory;
import io.erda.protocol.memory.LogGeometry;
import io.erda.protocol.memory.TableGeometry;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Two chains per head for log cleaning: slots, switch, retire, and what open makes of each head record. */
class LogChainsTest {
    static final StoreGeometry STORE = new StoreGeometry(1, TableGeometry.forCapacity(256, 32), LogHeadTest.SMALL);

    @TempDir(factory = ShmTempDirFactory.class)
    Path dir;

    /** Fills {@code regions} regions of the write chain with one object per segment. */
    private static List<Long> fill(LogHead head, int regions) {
        List<Long> offsets = new ArrayList<>();
        for (int i = 0; i < regions * 4; i++) {
            offsets.add(LogHeadTest.put(head, "k" + i, 8 * 1024));
        }
        return offsets;
    }

    @Test
    void newChainTakesFreeSlotsSoEveryOffsetNamesItsChain() {
        try (PmDirectory store = PmDirectory.create(dir, STORE, WriteLatencyModel.OFF)) {
            LogHead head = store.head(0);
            List<Long> old = fill(head, 2);
            LogChain next = head.beginNewChain();
            assertThat(next.generation()).isEqualTo(1);
            assertThat(next.slots()).containsExactly(2);
            long copy = head.reserveInNewChain(64);
            long oldGrowth = head.reserve(8 * 1024); // the old chain still grows during the merge: slot 3
            assertThat(head.chainOf(copy)).isSameAs(next);
            assertThat(head.chainOf(oldGrowth)).isSameAs(head.currentChain());
            assertThat(head.currentChain().slots()).containsExactly(0, 1, 3);
            assertThat(old).allMatch(o -> head.chainOf(o) == head.currentChain());
            assertThat(head.describe().regions()).extracting(HeadDescriptor.Region::regionIndex).containsExactly(0, 1, 2, 3);
        }
    }

    @Test
    void switchThenRetireLeavesOnlyTheNewChainAndFreesTheOldSlots() {
        try (PmDirectory store = PmDirectory.create(dir, STORE, WriteLatencyModel.OFF)) {
            LogHead head = store.head(0);
            fill(head, 2);
            head.beginNewChain();
            head.redirectWritesToNewChain();
            long written = LogHeadTest.put(head, "new", 10);
            LogChain old = head.switchToNewChain();
            head.retire(old);
            assertThat(Files.exists(dir.resolve(PmDirectory.regionFileName(0, 0)))).isFalse();
            assertThat(head.regions()).hasSize(1);
            assertThat(head.isMapped(8, 8)).isFalse();
            assertThatThrownBy(() -> head.resolve(8)).hasMessageContaining("lies in no region");
            assertThat(head.chainOf(written)).isSameAs(head.currentChain());
            for (int i = 0; i < 5; i++) {
                head.reserve(12 * 1024); // one per segment: the fifth passes the region's end
            }
            // the chain grows into the lowest freed slot
            assertThat(head.currentChain().slots()).containsExactly(2, 0);
        }
    }

    @Test
    void openDuringCleaningMapsBothChainsAndKeepsTheirTails() {
        long copy;
        long oldTail;
        try (PmDirectory store = PmDirectory.create(dir, STORE, WriteLatencyModel.OFF)) {
            LogHead head = store.head(0);
            fill(head, 1);
            head.beginNewChain();
            copy = head.reserveInNewChain(64);
            oldTail = head.tail();
            store.headRecords().set(0, CleaningPhase.REPLICATE, 0);
        }
        try (PmDirectory store = PmDirectory.open(dir, STORE, WriteLatencyModel.OFF)) {
            LogHead head = store.head(0);
            assertThat(head.newChain()).isNotNull();
            assertThat(head.chainOf(copy)).isSameAs(head.newChain());
            assertThat(head.newChain().logicalTail()).isGreaterThanOrEqualTo(LogGeometry.SEGMENT_HEADER_LENGTH + 64);
            assertThat(head.tail()).as("writes go to the old chain until the cleaner resumes").isGreaterThanOrEqualTo(oldTail);
        }
    }

    @Test
    void openFinishesARetireAndDeletesANewChainThatWasNeverCommitted() {
        try (PmDirectory store = PmDirectory.create(dir, STORE, WriteLatencyModel.OFF)) {
            LogHead head = store.head(0);
            fill(head, 1);
            head.beginNewChain(); // crash before the record said MERGE: slot 1 holds generation 1 of no chain
        }
        try (PmDirectory store = PmDirectory.open(dir, STORE, WriteLatencyModel.OFF)) {
            assertThat(store.head(0).newChain()).isNull();
            assertThat(Files.exists(dir.resolve(PmDirectory.regionFileName(0, 1)))).isFalse();
            LogHead head = store.head(0);
            head.beginNewChain();
            head.reserveInNewChain(64);
            store.headRecords().set(0, CleaningPhase.RETIRE, 1); // switch committed, old chain not yet deleted
        }
        try (PmDirectory store = PmDirectory.open(dir, STORE, WriteLatencyModel.OFF)) {
            assertThat(store.headRecords().phase(0)).isEqualTo(CleaningPhase.IDLE);
            assertThat(store.head(0).currentChain().generation()).isEqualTo(1);
            assertThat(store.head(0).currentChain().slots()).containsExactly(1);
            assertThat(Files.exists(dir.resolve(PmDirectory.regionFileName(0, 0)))).isFalse();
        }
    }
}
