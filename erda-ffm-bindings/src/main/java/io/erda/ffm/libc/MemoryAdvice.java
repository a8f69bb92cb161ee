package io.erda.ffm.libc;

import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;

import io.erda.ffm.verbs.Errno;
import java.io.UncheckedIOException;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemorySegment;
import java.lang.invoke.MethodHandle;

/** {@code madvise(2)} on a mapped {@link MemorySegment} (Linux). */
public final class MemoryAdvice {
    /** Back the range with transparent huge pages where the file system or shmem setting allows them. */
    public static final int MADV_HUGEPAGE = 14;
    /** Fault the range in writable now, allocating what is missing (Linux 5.14+). */
    public static final int MADV_POPULATE_WRITE = 23;
    /** The kernel's page size for transparent huge pages on x86-64 and most arm64 kernels (PMD size). */
    public static final long HUGE_PAGE_SIZE = 2L << 20;

    private static final long PAGE = 4096;
    private static final MethodHandle MADVISE = Linker.nativeLinker().downcallHandle(
            Linker.nativeLinker().defaultLookup().findOrThrow("madvise"),
            FunctionDescriptor.of(JAVA_INT, ADDRESS, JAVA_LONG, JAVA_INT), Errno.CAPTURE);

    private MemoryAdvice() {}

    /**
     * {@code madvise(address, length, advice)} over {@code segment}, whose address must be page-aligned (a mapping
     * or a page-aligned slice of one).
     *
     * @throws IllegalArgumentException if the segment does not start on a page
     * @throws UncheckedIOException     if the kernel refuses, naming advice, range and errno
     */
    public static void advise(MemorySegment segment, int advice) {
        if (segment.address() % PAGE != 0) {
            throw new IllegalArgumentException("madvise range at 0x" + Long.toHexString(segment.address())
                    + " does not start on a " + PAGE + "-byte page");
        }
        LibcCall.run("madvise", () -> "madvise(0x" + Long.toHexString(segment.address()) + ", " + segment.byteSize()
                + ", " + name(advice) + ")", state -> (int) MADVISE.invokeExact(state,
                MemorySegment.ofAddress(segment.address()), segment.byteSize(), advice), errno -> "");
    }

    private static String name(int advice) {
        return switch (advice) {
            case MADV_HUGEPAGE -> "MADV_HUGEPAGE";
            case MADV_POPULATE_WRITE -> "MADV_POPULATE_WRITE";
            default -> "advice " + advice;
        };
    }
}
