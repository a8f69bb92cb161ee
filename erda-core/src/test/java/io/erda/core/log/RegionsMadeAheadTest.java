package io.erda.core.log;

import static org.assertj.core.api.Assertions.assertThat;

import io.erda.core.PmDirectory;
import io.erda.core.StoreGeometry;
import io.erda.core.pm.WriteLatencyModel;
import io.erda.core.testing.ShmTempDirFactory;
import io.erda.protocol.memory.LogGeometry;
import io.erda.protocol.memory.TableGeometry;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** {@link LogHead#prepareAhead}: the next region is made in the background, joins the chain when needed, and a crash or a close leaves no trace of a spare. */
class RegionsMadeAheadTest {
    static final LogGeometry SMALL = new LogGeometry(64 * 1024, 16 * 1024, 4096);
    static final StoreGeometry STORE = new StoreGeometry(1, TableGeometry.forCapacity(256, 32), SMALL);

    @TempDir(factory = ShmTempDirFactory.class)
    Path dir;

    private Path regionFile(int slot) {
        return dir.resolve(PmDirectory.regionFileName(0, slot));
    }

    @Test
    void aSpareListenerHearsOfEverySpareBeforeTheChainTakesItAndOfTheOneDiscardedAtClose() throws Exception {
        ExecutorService preparer = Executors.newSingleThreadExecutor(r -> new Thread(r, "test-preparer"));
        List<io.erda.core.pm.PmRegion> made = Collections.synchronizedList(new ArrayList<>());
        List<io.erda.core.pm.PmRegion> discarded = Collections.synchronizedList(new ArrayList<>());
        List<String> madeOn = Collections.synchronizedList(new ArrayList<>());
        List<io.erda.core.pm.PmRegion> untaken = new ArrayList<>();
        try (PmDirectory store = PmDirectory.create(dir, STORE, WriteLatencyModel.OFF)) {
            LogHead head = store.head(0);
            head.prepareAhead(preparer);
            head.onSpares(new LogHead.SpareListener() {
                @Override
                public void made(int headId, io.erda.core.pm.PmRegion region) {
                    madeOn.add(Thread.currentThread().getName());
                    made.add(region);
                }

                @Override
                public void discarded(int headId, io.erda.core.pm.PmRegion region) {
                    discarded.add(region);
                }
            });
            for (int i = 0; i < 220; i++) { // 15 a segment, 4 segments a region: past half of region 3, whose spare is made
                head.reserve(1024);
                LogChain chain = head.currentChain();
                // every region the chain took after the first was heard of, before it was taken
                assertThat(made).containsAll(chain.regions().subList(1, chain.size()));
                assertThat(head.regionCount()).isEqualTo(head.regions().size()).isEqualTo(chain.size());
            }
            assertThat(madeOn).isNotEmpty().containsOnly("test-preparer");
            preparer.shutdown();
            assertThat(preparer.awaitTermination(10, java.util.concurrent.TimeUnit.SECONDS)).isTrue();
            untaken.addAll(made);
            untaken.removeAll(head.currentChain().regions());
            assertThat(untaken).as("the spare made ahead no chain took yet").hasSize(1);
            assertThat(discarded).isEmpty();
        } finally {
            preparer.shutdownNow();
        }
        assertThat(discarded).as("the close discards the spare").containsExactlyElementsOf(untaken);
    }

    @Test
    void concurrentReservationsGetDisjointSpaceAcrossRegionsMadeOnThePreparerThread() throws Exception {
        ExecutorService preparer = Executors.newSingleThreadExecutor(r -> new Thread(r, "test-preparer"));
        List<Long> offsets = Collections.synchronizedList(new ArrayList<>());
        List<String> threadsThatMadeRegions = Collections.synchronizedList(new ArrayList<>());
        try (PmDirectory store = PmDirectory.create(dir, STORE, WriteLatencyModel.OFF)) {
            LogHead head = store.head(0);
            head.prepareAhead(task -> preparer.execute(() -> {
                threadsThatMadeRegions.add(Thread.currentThread().getName());
                task.run();
            }));
            ExecutorService writers = Executors.newFixedThreadPool(4);
            List<Future<?>> done = new ArrayList<>();
            for (int w = 0; w < 4; w++) {
                done.add(writers.submit(() -> {
                    for (int i = 0; i < 300; i++) {
                        offsets.add(head.reserve(1024)); // 1200 KiB in all: about 20 regions of 64 KiB
                    }
                }));
            }
            for (Future<?> f : done) {
                f.get();
            }
            writers.shutdown();
            LogChain chain = head.currentChain();
            assertThat(chain.size()).isGreaterThanOrEqualTo(19);
            assertThat(chain.slots()).isEqualTo(java.util.stream.IntStream.range(0, chain.size()).boxed().toList());
            // every region after the first was made ahead on the preparer, none by a reserving thread
            assertThat(threadsThatMadeRegions).hasSizeGreaterThanOrEqualTo(chain.size() - 1).containsOnly("test-preparer");
            List<Long> sorted = offsets.stream().sorted().toList();
            for (int i = 1; i < sorted.size(); i++) {
                assertThat(sorted.get(i)).isGreaterThanOrEqualTo(sorted.get(i - 1) + 1024);
            }
            for (long offset : sorted) { // every reservation lies inside a region of the chain
                assertThat(head.isReserved(offset, 1024)).isTrue();
            }
            // the spare for the next region may exist on disk, but is not part of the chain or the head array
            assertThat(head.describe().regions()).hasSize(chain.size());
        } finally {
            preparer.shutdown();
        }
        // a clean close deletes a spare no chain took
        try (var files = Files.list(dir)) {
            long regions = files.filter(p -> p.getFileName().toString().startsWith("head-")).count();
            try (PmDirectory reopened = PmDirectory.open(dir, STORE, WriteLatencyModel.OFF)) {
                assertThat(regions).isEqualTo(reopened.head(0).currentChain().size());
            }
        }
    }

    @Test
    void aSpareLeftByACrashIsDroppedOnOpenAndTheTailStaysWhereItWas() {
        PmDirectory crashed = PmDirectory.create(dir, STORE, WriteLatencyModel.OFF);
        LogHead head = crashed.head(0);
        head.prepareAhead(Runnable::run); // made at once, on this thread
        for (int i = 0; i < 3; i++) {
            head.reserve(8 * 1024); // one per 16 KiB segment: the third ends past half of region 0, so slot 1 is made
        }
        long tail = head.tail();
        assertThat(regionFile(1)).exists();
        assertThat(head.currentChain().size()).isEqualTo(1);
        // no close: the process died here. Open maps the same files as a restarted server would.
        try (PmDirectory reopened = PmDirectory.open(dir, STORE, WriteLatencyModel.OFF)) {
            LogHead again = reopened.head(0);
            assertThat(again.currentChain().size()).isEqualTo(1);
            assertThat(regionFile(1)).doesNotExist();
            assertThat(again.tail()).isGreaterThanOrEqualTo(tail).isLessThan(SMALL.regionSize());
            long next = again.reserve(1024);
            assertThat(next).isGreaterThanOrEqualTo(tail);
        }
        crashed.close();
    }

    @Test
    void aRegionWithReservationsIsKeptOnOpenEvenIfItIsTheLast() {
        try (PmDirectory store = PmDirectory.create(dir, STORE, WriteLatencyModel.OFF)) {
            LogHead head = store.head(0);
            head.prepareAhead(Runnable::run);
            for (int i = 0; i < 100; i++) {
                head.reserve(1024);
            }
            assertThat(head.currentChain().size()).isEqualTo(2);
        }
        try (PmDirectory reopened = PmDirectory.open(dir, STORE, WriteLatencyModel.OFF)) {
            assertThat(reopened.head(0).currentChain().size()).isEqualTo(2);
            assertThat(reopened.head(0).tail()).isGreaterThan(SMALL.regionSize());
        }
    }
}
