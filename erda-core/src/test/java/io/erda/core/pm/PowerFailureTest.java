package io.erda.core.pm;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.erda.core.testing.ShmTempDirFactory;
import io.erda.protocol.memory.Words;
import java.io.IOException;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashSet;
import java.util.Set;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The durable images PmRegion keeps under power-failure emulation, and the offline collapse, on real files. */
class PowerFailureTest {
    private static final long DATA = 64 * 1024;
    private static final long PERSISTED = 0x1111_1111_1111_1111L;
    private static final long WRITTEN = 0x2222_2222_2222_2222L;

    @TempDir(factory = ShmTempDirFactory.class)
    Path dir;

    private PmRegion create(String name) {
        return PmRegion.create(dir.resolve(name), PmFileHeader.KIND_LOG_REGION, DATA, new long[] {1}, WriteLatencyModel.OFF);
    }

    private PmRegion open(String name) {
        return PmRegion.open(dir.resolve(name), PmFileHeader.KIND_LOG_REGION, WriteLatencyModel.OFF);
    }

    /** Line 0 persisted; line 2 (offset 128) written over a persisted value, never persisted; a mutable word set. */
    private void writeThenFail(String name) {
        try (PmRegion region = create(name)) {
            region.setLongRelease(0, PERSISTED);
            region.persist(0, 8);
            for (int word = 0; word < 8; word++) {
                region.setLongRelease(128 + word * 8, PERSISTED);
            }
            region.persist(128, 64);
            for (int word = 0; word < 8; word++) {
                region.setLongRelease(128 + word * 8, WRITTEN);
            }
            region.setMutableWord(2, 77);
        }
    }

    @Test
    void withoutTheMarkerNoImageIsKept() {
        try (PmRegion region = create("r.pm")) {
            assertThat(region.durableImage()).isNull();
            assertThat(region.durableImagePath()).isNull();
        }
        assertThat(Files.exists(dir.resolve("r.pm" + PowerFailure.IMAGE_SUFFIX))).isFalse();
    }

    /**
     * A file's image is made under a temporary name and renamed once it holds the header: a process killed while
     * it made one leaves a partial copy (here: zeros, the header not yet copied), which the power failure deletes;
     * the file, with no image, is durable as it is and opens. (An image made in place, as before, held the zeros under
     * its real name, and the collapse restored them over the header: the region refused to open.)
     */
    @Test
    void aKillWhileANewFilesImageIsMadeLeavesAFileThatOpens() throws IOException {
        PowerFailure.enable(dir, "test");
        create("r.pm").close();
        Path image = dir.resolve("r.pm" + PowerFailure.IMAGE_SUFFIX);
        Path partial = dir.resolve("r.pm" + PowerFailure.IMAGE_SUFFIX + ".copying");
        assertThat(image).exists();
        assertThat(partial).doesNotExist();
        long imageLength = Files.size(image);
        Files.delete(image); // the state a kill inside DurableImage.create leaves: the copy not renamed yet
        try (var channel = java.nio.channels.FileChannel.open(partial, java.nio.file.StandardOpenOption.CREATE_NEW,
                java.nio.file.StandardOpenOption.WRITE)) {
            channel.write(java.nio.ByteBuffer.allocate(1), imageLength - 1);
        }
        PowerFailure.collapse(dir, 3, PowerFailure.Policy.DROP);
        assertThat(partial).doesNotExist();
        try (PmRegion region = open("r.pm")) {
            assertThat(region.dataLength()).isEqualTo(DATA);
        }
    }

    @Test
    void dropRevertsWhatWasNotPersistedAndKeepsWhatWas() {
        PowerFailure.enable(dir, "test");
        writeThenFail("r.pm");
        PowerFailure.Report report = PowerFailure.collapse(dir, 1, PowerFailure.Policy.DROP);
        assertThat(report.lines()).isEqualTo(1);
        assertThat(report.dropped()).isEqualTo(1);
        assertThat(report.files()).singleElement().satisfies(f -> assertThat(f.file()).isEqualTo("r.pm"));
        try (PmRegion region = open("r.pm")) {
            assertThat(region.data().get(Words.LONG_U, 0)).isEqualTo(PERSISTED);
            assertThat(region.data().get(Words.LONG_U, 128)).isEqualTo(PERSISTED);
            assertThat(region.data().get(Words.LONG_U, 184)).isEqualTo(PERSISTED);
            assertThat(region.mutableWord(2)).isEqualTo(77);
        }
        // the image was reset to the result: a second collapse finds nothing
        assertThat(PowerFailure.collapse(dir, 2, PowerFailure.Policy.DROP).lines()).isZero();
    }

    @Test
    void keepLeavesTheWrittenLine() {
        PowerFailure.enable(dir, "test");
        writeThenFail("r.pm");
        PowerFailure.Report report = PowerFailure.collapse(dir, 1, PowerFailure.Policy.KEEP);
        assertThat(report.kept()).isEqualTo(1);
        try (PmRegion region = open("r.pm")) {
            assertThat(region.data().get(Words.LONG_U, 128)).isEqualTo(WRITTEN);
        }
    }

    @Test
    void tearMixesWholeWordsOfBothVersions() throws IOException {
        Set<Long> seen = new HashSet<>();
        for (long seed = 0; seed < 8; seed++) {
            Path store = dir.resolve("s" + seed);
            Files.createDirectories(store);
            PowerFailure.enable(store, "test");
            String name = "s" + seed + "/r.pm";
            writeThenFail(name);
            assertThat(PowerFailure.collapse(store, seed, PowerFailure.Policy.TEAR).torn()).isEqualTo(1);
            try (PmRegion region = open(name)) {
                for (int word = 0; word < 8; word++) {
                    long value = region.data().get(Words.LONG_U, 128 + word * 8);
                    assertThat(value).isIn(PERSISTED, WRITTEN);
                    seen.add(value);
                }
            }
        }
        assertThat(seen).containsExactlyInAnyOrder(PERSISTED, WRITTEN);
    }

    @Test
    void randomIsDeterministicPerSeedAndUsesEveryFate() {
        long[] first = null;
        Set<String> fates = new HashSet<>();
        for (int run = 0; run < 2; run++) {
            Path store = dir.resolve("run" + run);
            PowerFailure.enable(store, "test");
            try (PmRegion region = PmRegion.create(store.resolve("r.pm"), PmFileHeader.KIND_LOG_REGION, DATA,
                    new long[] {1}, WriteLatencyModel.OFF)) {
                for (long offset = 0; offset < DATA; offset += 64) {
                    region.setLongRelease(offset, offset + 1);
                }
            }
            PowerFailure.Report report = PowerFailure.collapse(store, 42, PowerFailure.Policy.RANDOM);
            assertThat(report.lines()).isEqualTo(DATA / 64);
            assertThat(report.kept() + report.dropped() + report.torn()).isEqualTo(report.lines());
            if (report.kept() > 0) {
                fates.add("kept");
            }
            if (report.dropped() > 0) {
                fates.add("dropped");
            }
            long[] values = new long[(int) (DATA / 64)];
            try (PmRegion region = PmRegion.open(store.resolve("r.pm"), PmFileHeader.KIND_LOG_REGION, WriteLatencyModel.OFF)) {
                for (int line = 0; line < values.length; line++) {
                    values[line] = region.data().get(Words.LONG_U, line * 64L);
                }
            }
            if (first == null) {
                first = values;
            } else {
                assertThat(values).isEqualTo(first);
            }
        }
        assertThat(fates).containsExactlyInAnyOrder("kept", "dropped");
    }

    @Test
    void anImageStartsAsACopyOfAFileMadeBeforeTheEmulation() {
        try (PmRegion region = create("r.pm")) {
            region.setLongRelease(4096, WRITTEN); // never persisted, but the emulation was off: it is durable
        }
        PowerFailure.enable(dir, "test");
        try (PmRegion region = open("r.pm")) {
            assertThat(region.durableImage().get(Words.LONG_U, 4096)).isEqualTo(WRITTEN);
            region.setLongRelease(8192, WRITTEN);
        }
        PowerFailure.collapse(dir, 5, PowerFailure.Policy.DROP);
        try (PmRegion region = open("r.pm")) {
            assertThat(region.data().get(Words.LONG_U, 4096)).isEqualTo(WRITTEN);
            assertThat(region.data().get(Words.LONG_U, 8192)).isZero();
        }
    }

    @Test
    void zeroForReuseAndDeletionReachTheImage() {
        PowerFailure.enable(dir, "test");
        try (PmRegion region = create("r.pm")) {
            region.setLongRelease(256, WRITTEN);
            region.persist(256, 8);
            region.zeroForReuse(DATA);
            assertThat(region.durableImage().get(ValueLayout.JAVA_LONG_UNALIGNED, 256)).isZero();
        }
        Path image = dir.resolve("r.pm" + PowerFailure.IMAGE_SUFFIX);
        assertThat(image).exists();
        open("r.pm").closeAndDelete();
        assertThat(image).doesNotExist();
        assertThat(dir.resolve("r.pm")).doesNotExist();
    }

    @Test
    void anOrphanImageIsDeletedAndAFileWithoutImageIsLeftAlone() throws IOException {
        PowerFailure.enable(dir, "test");
        Files.write(dir.resolve("gone.pm" + PowerFailure.IMAGE_SUFFIX), new byte[64]);
        Files.write(dir.resolve("plain.pm"), new byte[] {1, 2, 3});
        PowerFailure.Report report = PowerFailure.collapse(dir, 3, PowerFailure.Policy.DROP);
        assertThat(report.orphansDeleted()).containsExactly("gone.pm" + PowerFailure.IMAGE_SUFFIX);
        assertThat(report.filesCompared()).isZero();
        assertThat(Files.readAllBytes(dir.resolve("plain.pm"))).containsExactly(1, 2, 3);
        assertThat(report.toString()).contains("seed 3, policy drop, 0 files compared: 0 lines not durable");
    }

    /**
     * A persist copies into the image under the copy lock that mirroring providers take too, so that the image sees
     * bytes in the order they changed; a holder that died is taken over after a while.
     */
    @Test
    void persistCopiesUnderTheImagesLock() throws Exception {
        PowerFailure.enable(dir, "test");
        try (PmRegion region = create("r.pm")) {
            MemorySegment lock = region.durableImageLock();
            assertThat(region.durableImageLockOffset()).isEqualTo(region.mapping().byteSize());
            assertThat(lock.get(ValueLayout.JAVA_LONG, 0)).isZero();
            lock.set(ValueLayout.JAVA_LONG, 0, 1); // a mirroring provider holds it
            region.setLongRelease(0, WRITTEN);
            Thread persister = Thread.ofPlatform().start(() -> region.persist(0, 8));
            persister.join(300);
            assertThat(persister.isAlive()).as("persist waits for the lock").isTrue();
            assertThat(region.durableImage().get(Words.LONG_U, 0)).isZero();
            lock.set(ValueLayout.JAVA_LONG, 0, 0);
            persister.join(10_000);
            assertThat(region.durableImage().get(Words.LONG_U, 0)).isEqualTo(WRITTEN);

            lock.set(ValueLayout.JAVA_LONG, 0, 1); // a holder that never releases (killed): taken over
            region.setLongRelease(8, WRITTEN);
            long start = System.nanoTime();
            region.persist(8, 8);
            assertThat(System.nanoTime() - start).isGreaterThanOrEqualTo(DurableImage.LOCK_SPIN_NANOS);
            assertThat(region.durableImage().get(Words.LONG_U, 8)).isEqualTo(WRITTEN);
            assertThat(lock.get(ValueLayout.JAVA_LONG, 0)).isZero();
        }
        assertThat(Files.size(dir.resolve("r.pm" + PowerFailure.IMAGE_SUFFIX)))
                .isEqualTo(Files.size(dir.resolve("r.pm")) + DurableImage.LOCK_BYTES);
    }

    @Test
    void disableRemovesMarkerAndImages() {
        PowerFailure.enable(dir, "test");
        create("r.pm").close();
        PowerFailure.disable(dir);
        assertThat(PowerFailure.enabled(dir)).isFalse();
        assertThat(dir.resolve("r.pm" + PowerFailure.IMAGE_SUFFIX)).doesNotExist();
        assertThat(dir.resolve("r.pm")).exists();
    }

    @Test
    void badInputIsNamed() {
        assertThatThrownBy(() -> PowerFailure.Policy.of("melt")).hasMessageContaining("'melt'").hasMessageContaining("random");
        assertThatThrownBy(() -> PowerFailure.collapse(dir.resolve("nope"), 1, PowerFailure.Policy.DROP))
                .hasMessageContaining("does not exist");
    }
}
