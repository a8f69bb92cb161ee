package io.erda.ffm.libc;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.channels.FileChannel;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@link PageMap} against a real mapped file: what it reports present follows the pages this test touches, and what it
 * reports huge agrees with the kernel's other account of the same mapping, {@code ShmemPmdMapped} and
 * {@code FilePmdMapped} in {@code /proc/self/smaps}. (A tmpfs with huge pages is in erda-server's HugePagesTest,
 * which checks the store's regions the same way.)
 */
class PageMapTest {
    private static final long PAGE = 4096;
    private static final long LENGTH = 8L << 20;

    @TempDir
    Path dir;

    @Test
    void presentBytesFollowThePagesTouchedAndHugeBytesAgreeWithSmaps() throws IOException {
        Path file = dir.resolve("mapped.bin");
        try (FileChannel channel = FileChannel.open(file, StandardOpenOption.CREATE_NEW, StandardOpenOption.READ,
                StandardOpenOption.WRITE);
             Arena arena = Arena.ofConfined()) {
            channel.truncate(0);
            channel.write(java.nio.ByteBuffer.allocate(1), LENGTH - 1); // the length, no page cache touched but the last
            MemorySegment mapping = channel.map(FileChannel.MapMode.READ_WRITE, 0, LENGTH, arena);
            MemorySegment firstHalf = mapping.asSlice(0, LENGTH / 2);

            assertThat(PageMap.residency(firstHalf).presentBytes()).as("nothing touched yet").isZero();

            mapping.set(ValueLayout.JAVA_BYTE, 0, (byte) 1);
            mapping.set(ValueLayout.JAVA_BYTE, 3 * PAGE + 17, (byte) 1);
            PageMap.Residency touched = PageMap.residency(firstHalf);
            long hugeAfterTouch = touched.hugeBytes();
            if (hugeAfterTouch == 0) { // 4 KiB pages: exactly the two written
                assertThat(touched.presentBytes()).as("pages 0 and 3 written").isEqualTo(2 * PAGE);
            } else { // a file system with huge pages maps the whole 2 MiB block at the first write
                assertThat(touched.presentBytes()).isEqualTo(hugeAfterTouch).isEqualTo(MemoryAdvice.HUGE_PAGE_SIZE);
            }

            MemoryAdvice.advise(mapping, MemoryAdvice.MADV_POPULATE_WRITE);
            PageMap.Residency whole = PageMap.residency(mapping);
            assertThat(whole.presentBytes()).as("populated whole").isEqualTo(LENGTH);
            assertThat(whole.hugeBytes() / 1024).as("huge kB against /proc/self/smaps for " + file)
                    .isEqualTo(PageMap.smapsKb(mapping.address(), "ShmemPmdMapped:", "FilePmdMapped:"));
            assertThat(PageMap.residency(mapping.asSlice(LENGTH / 2)).presentBytes()).as("second half alone")
                    .isEqualTo(LENGTH / 2);
        }
    }

    @Test
    void aRangeOffPageBoundariesCountsEveryPageItTouches() {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment memory = arena.allocate(4 * PAGE, PAGE);
            memory.fill((byte) 1); // present, whatever their page size
            long pageSize = PageMap.residency(memory.asSlice(PAGE, PAGE)).presentBytes();
            assertThat(pageSize).as("one page, 4 KiB or a huge page's share of it").isEqualTo(PAGE);
            assertThat(PageMap.residency(memory.asSlice(PAGE + 8, 16)).presentBytes()).as("16 bytes inside page 1")
                    .isEqualTo(PAGE);
            assertThat(PageMap.residency(memory.asSlice(PAGE - 8, 16)).presentBytes()).as("16 bytes across pages 0 and 1")
                    .isEqualTo(2 * PAGE);
        }
    }
}
