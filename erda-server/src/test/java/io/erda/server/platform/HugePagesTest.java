package io.erda.server.platform;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.erda.core.log.LogHead;
import io.erda.core.pm.PmRegion;
import io.erda.server.ErdaServerMain;
import io.erda.server.ServerConfig;
import io.erda.server.TestStores;
import io.erda.server.store.Store;
import io.erda.server.store.StoreStats;
import java.io.IOException;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * {@code --huge-pages thp} on real mapped files: the test mounts two tmpfs of its own, one {@code huge=within_size}
 * and one {@code huge=never} (root only: skipped, saying so, without root; CI runs as root), so the outcome does not
 * depend on how this machine mounted /dev/shm.
 */
class HugePagesTest {
    private static Path huge;
    private static Path never;
    private static final List<Path> MOUNTED = new ArrayList<>();

    @BeforeAll
    static void mountTmpfs() throws Exception {
        huge = mount("huge=within_size");
        never = mount("huge=never");
    }

    @AfterAll
    static void unmount() throws Exception {
        for (Path p : MOUNTED) {
            run("umount", p.toString());
            Files.deleteIfExists(p);
        }
    }

    private static Path mount(String option) throws Exception {
        if (huge == null && never == null) {
            assumeTrue(isRoot(), "mounting a tmpfs with a huge= option needs root; this test runs as uid "
                    + new com.sun.security.auth.module.UnixSystem().getUid());
        }
        Path point = Files.createTempDirectory("erda-huge-pages-test-");
        assertThat(run("mount", "-t", "tmpfs", "-o", option + ",size=128m", "erda-huge-pages-test", point.toString()))
                .as("mount -t tmpfs -o " + option + " as root").isZero();
        MOUNTED.add(point);
        return point;
    }

    private static boolean isRoot() {
        return new com.sun.security.auth.module.UnixSystem().getUid() == 0;
    }

    private static int run(String... command) throws IOException, InterruptedException {
        Process p = new ProcessBuilder(command).inheritIO().start();
        assertThat(p.waitFor(30, TimeUnit.SECONDS)).isTrue();
        return p.exitValue();
    }

    /** 2 MiB regions and a table of several 2 MiB pages, so every log and table mapping can hold huge pages. */
    private static ServerConfig config(Path dir) {
        return ServerConfig.defaults(dir.resolve("store"), java.net.URI.create("tcp://127.0.0.1:0"))
                .withGeometry(2, 1L << 19, 2L << 20, 256L << 10).withLease(Duration.ofSeconds(30))
                .withHugePages(HugePages.THP);
    }

    /**
     * kB of the region's mapping that huge pages map, as /proc/self/smaps tells it; the server's own check
     * ({@link HugePages#hugeMappedKb}, the kernel's PAGEMAP_SCAN of the range) must tell the same.
     */
    private static long pmdKb(PmRegion region) {
        long smapsKb = HugePages.shmemPmdMappedKb(region.mapping().address());
        assertThat(HugePages.hugeMappedKb(region.mapping())).as("huge kB of " + region.path() + " by PAGEMAP_SCAN")
                .isEqualTo(smapsKb);
        return smapsKb;
    }

    @Test
    void thpMapsTableAndEveryRegionWithHugePagesAcrossGrowthAndARestart() {
        ServerConfig config = config(huge);
        try (Store store = config.openStore(new StoreStats())) {
            PmRegion table = store.directory().table().region();
            long hugePages = table.mapping().byteSize() / (2L << 20);
            assertThat(hugePages).as("huge pages the table spans").isGreaterThan(1);
            // populated whole when mapped, not only its first 2 MiB: no request faults a huge page in
            assertThat(pmdKb(table)).as("the table's huge kB").isEqualTo(hugePages * 2048);
            for (int i = 0; i < 6000; i++) { // 6000 × ~1 KiB over 2 heads: each chain grows past its first 2 MiB region
                TestStores.put(store, "key-" + i, "v".repeat(1000));
            }
            for (LogHead head : store.directory().heads()) {
                assertThat(head.currentChain().size()).isGreaterThan(1);
                for (PmRegion region : head.regions()) {
                    assertThat(region.mapping().address() % (2L << 20)).isZero();
                    assertThat(pmdKb(region)).as(region.path().toString()).isGreaterThanOrEqualTo(2048);
                }
            }
        }
        // reopened, as after a crash or a stop: the same files map with huge pages again and read back
        try (Store store = config.openStore(new StoreStats())) {
            assertThat(TestStores.get(store, "key-5999")).isEqualTo("v".repeat(1000));
            for (LogHead head : store.directory().heads()) {
                for (PmRegion region : head.regions()) {
                    assertThat(pmdKb(region)).as(region.path().toString()).isGreaterThanOrEqualTo(2048);
                }
            }
        } finally {
            deleteStore(huge);
        }
    }

    @Test
    void aMappingLargerThanWhatTheTmpfsHasLeftIsRefusedNamingItsFreeSpace() throws IOException {
        Path file = huge.resolve("larger-than-the-tmpfs.pm");
        long length = 256L << 20; // the tmpfs holds 128 MiB
        try (java.nio.channels.FileChannel channel = java.nio.channels.FileChannel.open(file,
                java.nio.file.StandardOpenOption.CREATE_NEW, java.nio.file.StandardOpenOption.READ,
                java.nio.file.StandardOpenOption.WRITE);
             java.lang.foreign.Arena arena = java.lang.foreign.Arena.ofConfined()) {
            channel.write(java.nio.ByteBuffer.allocate(1), length - 1); // sparse: one page
            java.lang.foreign.MemorySegment mapping = channel.map(java.nio.channels.FileChannel.MapMode.READ_WRITE, 0,
                    length, arena);
            assertThatThrownBy(() -> HugePages.verify(file, mapping)).isInstanceOf(java.io.UncheckedIOException.class)
                    .hasMessageContaining("cannot populate the " + length + " bytes of " + file)
                    .hasMessageContaining("bytes free").hasMessageContaining("size=");
        } finally {
            Files.deleteIfExists(file);
        }
    }

    @Test
    void thpOnATmpfsWithoutHugePagesIsRefusedWithExitTwoNamingTheMountAndTheFix() {
        StringWriter err = new StringWriter();
        int code = ErdaServerMain.run(new PrintWriter(new StringWriter()), new PrintWriter(err, true),
                "--dir", never.resolve("store").toString(), "--huge-pages", "thp", "--listen", "tcp://127.0.0.1:0");
        assertThat(code).isEqualTo(2);
        assertThat(err.toString()).contains("--huge-pages thp", never.toString(), "huge=never", "huge=within_size",
                HugePages.SHMEM_ENABLED, "--huge-pages off");
        assertThat(never.resolve("store").resolve("table.pm")).doesNotExist();
    }

    @Test
    void aStoreWhosePagesAreSmallIsRefusedNotServedWithThem() throws IOException {
        // made on the huge=never tmpfs, then copied onto the huge one: a file grown by write(2) is never "within
        // size" of a huge page while it grows, so the copy keeps 4 KiB pages
        Path small = never.resolve("small");
        try (Store store = config(small).withHugePages(HugePages.OFF).openStore(new StoreStats())) {
            TestStores.put(store, "k", "v");
        }
        Path moved = huge.resolve("moved").resolve("store");
        Files.createDirectories(moved);
        Files.setPosixFilePermissions(moved, java.nio.file.attribute.PosixFilePermissions.fromString("rwx------"));
        try (var files = Files.list(small.resolve("store"))) {
            for (Path f : files.toList()) {
                copyByWrites(f, moved.resolve(f.getFileName()));
            }
        }
        try {
            assertThatThrownBy(() -> config(huge.resolve("moved")).openStore(new StoreStats()))
                    .isInstanceOf(HugePagesUnavailableException.class)
                    // the first file found with small pages: table.pm, or a log region where the kernel (khugepaged,
                    // running over shmem here) had made the table's huge by then; fresh-clone runs saw both
                    .hasMessageMatching("(?s).*" + java.util.regex.Pattern.quote(moved.toString())
                            + "/(table|head-\\d{5}-region-\\d{5})\\.pm 4 KiB pages.*")
                    .hasMessageContaining("0 kB of the first 2 MiB of its mapping")
                    .hasMessageContaining("mapped by a huge page").hasMessageContaining(HugePages.SHMEM_ENABLED);
        } finally {
            deleteStore(huge.resolve("moved"));
            deleteStore(small);
        }
    }

    /**
     * Copies with write(2) of 64 KiB at a time, so that the copy grows by small pages as the test's premise says.
     * Files.copy goes through copy_file_range, whose large in-kernel writes can cover a whole 2 MiB of a
     * huge=within_size file at once.
     */
    private static void copyByWrites(Path from, Path to) throws IOException {
        byte[] buffer = new byte[64 * 1024];
        try (var in = Files.newInputStream(from); var out = Files.newOutputStream(to)) {
            for (int n; (n = in.read(buffer)) > 0; ) {
                out.write(buffer, 0, n);
            }
        }
        Files.setPosixFilePermissions(to, Files.getPosixFilePermissions(from));
    }

    @Test
    void refusalsNameTheFileSystemAndTheSettingToChange() {
        List<Mounts.Mount> mounts = Mounts.parse(List.of(
                "22 1 0:20 / / rw - ext4 /dev/vda rw",
                "25 22 0:21 / /dev/shm rw,relatime - tmpfs tmpfs rw,size=1024k",
                "26 22 0:22 / /mnt/advise rw - tmpfs erda rw,huge=advise",
                "27 22 0:23 / /mnt/huge\\040pm rw shared:5 - tmpfs erda rw,size=8g,huge=within_size"));
        assertThat(Mounts.containing(mounts, Path.of("/mnt/huge pm/store")).option("huge", "never")).isEqualTo("within_size");
        HugePages.requireHugeTmpfs(Path.of("/mnt/huge pm/store"), mounts, "never");
        HugePages.requireHugeTmpfs(Path.of("/dev/shm/store"), mounts, "force"); // force overrides huge=never
        assertThatThrownBy(() -> HugePages.requireHugeTmpfs(Path.of("/dev/shm/store"), mounts, "never"))
                .isInstanceOf(HugePagesUnavailableException.class).hasMessageContaining("/dev/shm mounted huge=never")
                .hasMessageContaining("shmem_enabled: never").hasMessageContaining("huge=within_size");
        assertThatThrownBy(() -> HugePages.requireHugeTmpfs(Path.of("/mnt/advise/store"), mounts, "never"))
                .isInstanceOf(HugePagesUnavailableException.class).hasMessageContaining("huge=advise")
                .hasMessageContaining("clients write log objects");
        assertThatThrownBy(() -> HugePages.requireHugeTmpfs(Path.of("/var/lib/erda"), mounts, "always"))
                .isInstanceOf(HugePagesUnavailableException.class).hasMessageContaining("is on ext4")
                .hasMessageContaining("not tmpfs");
        assertThatThrownBy(() -> HugePages.requireHugeTmpfs(Path.of("/mnt/huge pm/store"), mounts, "deny"))
                .isInstanceOf(HugePagesUnavailableException.class).hasMessageContaining("is deny");
        assertThatThrownBy(() -> HugePages.fromOption("hugetlbfs")).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("'hugetlbfs' is not one of off, thp");
    }

    private static void deleteStore(Path dir) {
        try (var walk = Files.walk(dir)) {
            walk.sorted(java.util.Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
        } catch (IOException ignored) {
            // the tmpfs goes with the unmount
        }
    }
}
