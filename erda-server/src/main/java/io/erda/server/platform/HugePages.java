package io.erda.server.platform;

import io.erda.core.pm.MappingAdvice;
import io.erda.core.pm.PmRegion;
import io.erda.ffm.libc.MemoryAdvice;
import io.erda.ffm.libc.PageMap;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.lang.foreign.MemorySegment;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;

/**
 * Whether the server maps the table and the log regions with huge pages ({@code --huge-pages};
 * docs/ARCHITECTURE.md, "Persistent memory and layouts"). A GET reads a random table window and a random object: with
 * 4 KiB pages over gigabytes both miss the TLB.
 *
 * <p>{@link #THP}: transparent huge pages of tmpfs. The store directory must be on a tmpfs whose {@code huge=} mount
 * option is {@code always} or {@code within_size} (or {@code shmem_enabled} is {@code force}): there every page of a
 * file is allocated as a 2 MiB page by whoever touches it first, and shm clients write log objects through their own
 * mappings, so an option that serves only mappings that asked ({@code huge=advise} with {@code MADV_HUGEPAGE}) would
 * leave the log on 4 KiB pages. The kernel then also places every mapping of such a file, the clients' included, on a
 * 2 MiB boundary. Every mapping of 2 MiB or more is checked: it must start on a 2 MiB boundary, and its first 2 MiB,
 * populated at once ({@code MADV_POPULATE_WRITE}), must be mapped as one huge page (the kernel's {@code PAGEMAP_SCAN}
 * of that range; {@code ShmemPmdMapped} in {@code /proc/self/smaps} before Linux 6.7). Anything else is refused with
 * what to change; the server never falls back to 4 KiB pages on its own.
 */
public enum HugePages {
    /** The mapping as the file system makes it (4 KiB pages on a default tmpfs). */
    OFF("off"),
    /** Transparent huge pages on a tmpfs mounted with {@code huge=within_size} or {@code huge=always}, verified. */
    THP("thp");

    static final String SHMEM_ENABLED = "/sys/kernel/mm/transparent_hugepage/shmem_enabled";
    static final long HUGE_PAGE = MemoryAdvice.HUGE_PAGE_SIZE;

    private final String option;

    HugePages(String option) {
        this.option = option;
    }

    /** The name on command lines. */
    public String option() {
        return option;
    }

    public static HugePages fromOption(String name) {
        for (HugePages h : values()) {
            if (h.option.equalsIgnoreCase(name)) {
                return h;
            }
        }
        throw new IllegalArgumentException("huge pages '" + name + "' is not one of off, thp");
    }

    /**
     * What the store's mappings get: nothing for {@link #OFF}; for {@link #THP} the verification of each mapping,
     * after checking that {@code directory} (or, if it does not exist yet, its nearest existing parent) lies on a
     * tmpfs that gives every page of a file a huge page.
     *
     * @throws IllegalStateException naming the mount, its option and what to change, if it does not
     */
    public MappingAdvice advice(Path directory) {
        if (this == OFF) {
            return MappingAdvice.NONE;
        }
        requireHugeTmpfs(existingRealPath(directory), Mounts.read(), readSetting(SHMEM_ENABLED));
        return THP_ADVICE;
    }

    /** {@link #verify} each mapping; a new file is written whole before it is mapped ({@link MappingAdvice#allocatesNewFiles}). */
    private static final MappingAdvice THP_ADVICE = new MappingAdvice() {
        @Override
        public void mapped(Path path, MemorySegment mapping) {
            verify(path, mapping);
        }

        @Override
        public boolean allocatesNewFiles() {
            return true;
        }
    };

    /** {@code directory}, or its nearest existing parent, with symbolic links resolved: what the mount table names. */
    static Path existingRealPath(Path directory) {
        Path existing = directory.toAbsolutePath().normalize();
        while (existing != null && !Files.exists(existing)) {
            existing = existing.getParent();
        }
        try {
            return existing == null ? directory.toAbsolutePath() : existing.toRealPath();
        } catch (IOException e) {
            throw new UncheckedIOException("--huge-pages thp: cannot resolve " + directory, e);
        }
    }

    /** Refuses a directory (real path) whose file system will not give its files huge pages (see class comment). */
    static void requireHugeTmpfs(Path directory, List<Mounts.Mount> mounts, String shmemEnabled) {
        Path real = directory;
        Mounts.Mount mount = Mounts.containing(mounts, real);
        String fix = "mount a tmpfs for the store with huge pages, as root: mount -t tmpfs -o huge=within_size,size=SIZE "
                + "erda-pm DIR (or remount this one with -o remount,huge=within_size), or run with --huge-pages off";
        if (mount == null || !mount.type().equals("tmpfs")) {
            throw new HugePagesUnavailableException("--huge-pages thp: " + directory + " is on " + (mount == null ? "no known mount"
                    : mount.type() + " (" + mount.point() + ")") + ", not tmpfs; transparent huge pages for PM files "
                    + "are offered on tmpfs only (not on DAX or hugetlbfs): " + fix);
        }
        if (shmemEnabled.equals("deny")) {
            throw new HugePagesUnavailableException("--huge-pages thp: " + SHMEM_ENABLED + " is deny, which turns huge pages "
                    + "off for every tmpfs; write always, within_size, advise, never or force to it (as root), or run with "
                    + "--huge-pages off");
        }
        String huge = mount.option("huge", "never");
        if (!shmemEnabled.equals("force") && !huge.equals("always") && !huge.equals("within_size")) {
            throw new HugePagesUnavailableException("--huge-pages thp: " + directory + " is on the tmpfs " + mount.point()
                    + " mounted huge=" + huge + " (" + SHMEM_ENABLED + ": " + shmemEnabled + "), so its files get 4 KiB pages"
                    + (huge.equals("advise") ? " wherever clients write log objects through their own mappings" : "")
                    + ": " + fix);
        }
    }

    /**
     * {@link MappingAdvice} of {@link #THP}: the mapping is 2 MiB-aligned and its first 2 MiB one huge page; then the
     * whole mapping is populated, so no request faults a huge page in.
     */
    static void verify(Path path, MemorySegment mapping) {
        if (mapping.byteSize() < HUGE_PAGE) {
            return; // no huge page fits (heads.pm, tiny tables): nothing to promise
        }
        if (mapping.address() % HUGE_PAGE != 0) {
            throw new HugePagesUnavailableException("--huge-pages thp: " + path + " is mapped at 0x" + Long.toHexString(mapping.address())
                    + ", not on a 2 MiB boundary, so no huge page can map it (the kernel aligns mappings only of files on "
                    + "a tmpfs mounted with huge=)");
        }
        MemoryAdvice.advise(mapping.asSlice(0, HUGE_PAGE), MemoryAdvice.MADV_POPULATE_WRITE);
        long hugeKb = hugeMappedKb(mapping.asSlice(0, HUGE_PAGE));
        if (hugeKb < HUGE_PAGE / 1024) {
            throw new HugePagesUnavailableException("--huge-pages thp: the kernel gave " + path + " 4 KiB pages ("
                    + hugeKb + " kB of the first 2 MiB of its mapping at 0x" + Long.toHexString(mapping.address())
                    + " mapped by a huge page after populating them): no free 2 MiB block (see /proc/buddyinfo; "
                    + "/sys/kernel/mm/transparent_hugepage/defrag is " + readSetting("/sys/kernel/mm/transparent_hugepage/defrag")
                    + "), or the file was written with 4 KiB pages before (a store created with --huge-pages off), or "
                    + "huge pages are off (" + SHMEM_ENABLED + ": " + readSetting(SHMEM_ENABLED) + ")");
        }
        if (mapping.byteSize() > HUGE_PAGE) {
            // The rest now, on the thread that maps the file (a region made ahead: the preparer's): a 2 MiB page
            // faulted by a PUT costs it up to tens of milliseconds (zeroing, compaction for a free 2 MiB block). A
            // file the store just made has its pages already (written through the file, allocatesNewFiles), so this
            // maps them and allocates nothing while it holds the process's memory-map lock.
            try {
                MemoryAdvice.advise(mapping.asSlice(HUGE_PAGE), MemoryAdvice.MADV_POPULATE_WRITE);
            } catch (java.io.UncheckedIOException e) {
                throw new java.io.UncheckedIOException(new java.io.IOException("--huge-pages thp: cannot populate the "
                        + mapping.byteSize() + " bytes of " + path + ": " + PmRegion.freeSpace(path) + " (a full tmpfs makes "
                        + "populating fail with EFAULT; mount it with a larger size=, or use smaller --region-size)",
                        e.getCause()));
            }
        }
    }

    /**
     * kB of {@code range} (part of a mapping of this process) that huge pages map. Asks the kernel about that range
     * alone ({@link PageMap}, Linux 6.7+); an older kernel is asked through {@code /proc/self/smaps}, whose reading
     * walks every mapping of the process under its memory-map lock (holding up the heap's commits, and so requests,
     * for milliseconds in a large store), and which tells only whole mappings:
     * there {@code range} must start a mapping.
     */
    static long hugeMappedKb(MemorySegment range) {
        try {
            return PageMap.residency(range).hugeBytes() / 1024;
        } catch (UnsupportedOperationException olderKernel) {
            return Math.min(shmemPmdMappedKb(range.address()), range.byteSize() / 1024);
        }
    }

    /** ShmemPmdMapped (kB) of the mapping of this process that starts at {@code address}, 0 if it has none. */
    static long shmemPmdMappedKb(long address) {
        try {
            return PageMap.smapsKb(address, "ShmemPmdMapped:");
        } catch (IOException e) {
            throw new UncheckedIOException("--huge-pages thp: cannot read /proc/self/smaps to check the huge pages", e);
        }
    }

    /** The selected value of a sysfs setting ("always [madvise] never" gives madvise), or "unknown". */
    static String readSetting(String file) {
        try {
            String text = Files.readString(Path.of(file)).trim();
            int open = text.indexOf('[');
            int close = text.indexOf(']');
            return open >= 0 && close > open ? text.substring(open + 1, close) : text;
        } catch (IOException | RuntimeException e) {
            return "unknown";
        }
    }
}
