package io.erda.ffm.libc;

import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;

import io.erda.ffm.verbs.Errno;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemorySegment;
import java.lang.invoke.MethodHandle;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;

/**
 * Which pages of one of this process's mappings are in memory, and which of them a huge page maps: the
 * {@code PAGEMAP_SCAN} ioctl on {@code /proc/self/pagemap} (Linux 6.7+).
 *
 * <p>Why not {@code /proc/self/smaps}: reading it walks the page tables of every mapping of the process while holding
 * the process's memory-map lock for reading, and a mapping call of another thread (ZGC committing heap, say) waits for
 * that lock. A server with gigabytes of mapped regions spent 10 to 25 ms in each read, and its request thread waited
 * up to 6 ms in ZGC behind it. The scan walks only the range asked about.
 */
public final class PageMap {
    /** {@code PAGE_IS_PRESENT}: the page is in memory and mapped. */
    static final long PAGE_IS_PRESENT = 1L << 3;
    /** {@code PAGE_IS_HUGE}: mapped by a huge page (a PMD-mapped transparent huge page, or hugetlbfs). */
    static final long PAGE_IS_HUGE = 1L << 6;
    /** {@code _IOWR('f', 16, struct pm_scan_arg)}, the struct being 96 bytes (include/uapi/linux/fs.h). */
    static final long PAGEMAP_SCAN = 0xC0606610L;
    /** {@code struct pm_scan_arg}: twelve u64 fields. */
    private static final int SCAN_ARG_BYTES = 96;
    /** {@code struct page_region}: start, end, categories (u64 each). */
    private static final int REGION_BYTES = 24;
    /** page_region entries per call; a range with more runs of different categories takes several calls. */
    private static final int REGIONS_PER_CALL = 64;
    private static final long PAGE = 4096;
    private static final int O_RDONLY = 0;
    private static final int ENOTTY = 25;

    private static final Linker LINKER = Linker.nativeLinker();
    private static final MethodHandle IOCTL = LINKER.downcallHandle(LINKER.defaultLookup().findOrThrow("ioctl"),
            FunctionDescriptor.of(JAVA_INT, JAVA_INT, JAVA_LONG, ADDRESS), Linker.Option.firstVariadicArg(2), Errno.CAPTURE);

    private PageMap() {}

    /** Bytes of a range that are in memory, and how many of them huge pages map. */
    public record Residency(long presentBytes, long hugeBytes) {}

    /**
     * The residency of the pages {@code range} (part of a mapping of this process) lies on: from the page holding its
     * first byte to the end of the page holding its last.
     *
     * @throws UnsupportedOperationException if the kernel has no {@code PAGEMAP_SCAN} (before Linux 6.7): the
     *                                       caller may fall back to {@code /proc/self/smaps}
     * @throws UncheckedIOException          if the kernel refuses otherwise, naming the range and errno
     */
    public static Residency residency(MemorySegment range) {
        long start = range.address() & -PAGE;
        long end = (range.address() + range.byteSize() + PAGE - 1) & -PAGE;
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment errno = arena.allocate(Errno.CAPTURE_LAYOUT);
            int fd = (int) LibcCall.OPEN.invokeExact(errno, arena.allocateFrom("/proc/self/pagemap"),
                    O_RDONLY | LibcCall.O_CLOEXEC);
            if (fd < 0) {
                throw LibcCall.refused("open(/proc/self/pagemap)", Errno.read(errno), "");
            }
            try {
                return scan(arena, errno, fd, start, end);
            } finally {
                int unused = (int) LibcCall.CLOSE.invokeExact(fd);
            }
        } catch (RuntimeException | Error e) {
            throw e;
        } catch (Throwable t) {
            throw new IllegalStateException("pagemap scan downcall failed", t);
        }
    }

    /**
     * The kernel's other account: the sum of {@code fields} (kB, e.g. {@code "ShmemPmdMapped:"}) of the mapping of this
     * process that starts at {@code mappingStart}, from {@code /proc/self/smaps}; 0 if there is no such mapping or
     * field. For kernels without {@code PAGEMAP_SCAN}, and for tests that check the scan against it: reading smaps walks
     * every mapping of the process under its memory-map lock (class comment).
     */
    public static long smapsKb(long mappingStart, String... fields) throws IOException {
        String start = Long.toHexString(mappingStart) + "-";
        List<String> wanted = List.of(fields);
        long kb = 0;
        try (BufferedReader in = Files.newBufferedReader(Path.of("/proc/self/smaps"), StandardCharsets.US_ASCII)) {
            boolean inside = false;
            for (String line; (line = in.readLine()) != null; ) {
                int space = line.indexOf(' ');
                String first = space < 0 ? line : line.substring(0, space);
                if (!first.endsWith(":") && first.indexOf('-') > 0) { // "start-end perms offset dev inode path"
                    inside = first.startsWith(start);
                } else if (inside && wanted.contains(first)) {
                    kb += Long.parseLong(line.substring(first.length()).replace("kB", "").trim());
                }
            }
        }
        return kb;
    }

    private static Residency scan(Arena arena, MemorySegment errno, int fd, long start, long end) throws Throwable {
        MemorySegment arg = arena.allocate(SCAN_ARG_BYTES, 8);
        MemorySegment regions = arena.allocate((long) REGION_BYTES * REGIONS_PER_CALL, 8);
        long present = 0;
        long huge = 0;
        for (long from = start; from < end; ) {
            arg.fill((byte) 0);
            arg.set(JAVA_LONG, 0, SCAN_ARG_BYTES); // size
            arg.set(JAVA_LONG, 16, from); // start
            arg.set(JAVA_LONG, 24, end); // end
            arg.set(JAVA_LONG, 40, regions.address()); // vec
            arg.set(JAVA_LONG, 48, REGIONS_PER_CALL); // vec_len
            arg.set(JAVA_LONG, 80, PAGE_IS_PRESENT | PAGE_IS_HUGE); // category_anyof_mask: skip what is not mapped
            arg.set(JAVA_LONG, 88, PAGE_IS_PRESENT | PAGE_IS_HUGE); // return_mask
            int count = (int) IOCTL.invokeExact(errno, fd, PAGEMAP_SCAN, arg);
            if (count < 0) {
                int e = Errno.read(errno);
                if (e == ENOTTY) {
                    throw new UnsupportedOperationException("this kernel (" + System.getProperty("os.version")
                            + ") has no PAGEMAP_SCAN ioctl on /proc/self/pagemap (Linux 6.7 added it)");
                }
                throw LibcCall.refused("ioctl(PAGEMAP_SCAN, 0x" + Long.toHexString(from) + "-0x" + Long.toHexString(end)
                        + ")", e, "");
            }
            for (int i = 0; i < count; i++) {
                long entry = (long) i * REGION_BYTES; // start, end, categories
                long bytes = regions.get(JAVA_LONG, entry + 8) - regions.get(JAVA_LONG, entry);
                long categories = regions.get(JAVA_LONG, entry + 16);
                present += (categories & PAGE_IS_PRESENT) != 0 ? bytes : 0;
                huge += (categories & PAGE_IS_HUGE) != 0 ? bytes : 0;
            }
            long walkEnd = arg.get(JAVA_LONG, 32);
            if (walkEnd <= from) {
                throw new IllegalStateException("ioctl(PAGEMAP_SCAN) from 0x" + Long.toHexString(from)
                        + " walked to 0x" + Long.toHexString(walkEnd) + ": no progress");
            }
            from = walkEnd;
        }
        return new Residency(present, huge);
    }
}
