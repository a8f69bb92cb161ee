package io.erda.core.pm;

import static org.assertj.core.api.Assertions.assertThat;

import io.erda.core.testing.ShmTempDirFactory;
import java.io.IOException;
import java.lang.foreign.ValueLayout;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The store detects DAX by asking for it: PmRegion maps MAP_SYNC, which the kernel grants only on a file system mounted
 * with DAX, and falls back to a plain shared mapping elsewhere. Checked here against the mount table: the tests' PM
 * directory ({@link ShmTempDirFactory#base()}) is on a DAX mount exactly when the region is MAP_SYNC, and then persist
 * writes cache lines back. On the host that directory is tmpfs; scripts/test-softroce's pm-dax group runs this on the
 * DAX file system of scripts/softroce-vm --pmem with {@code -Derda.test.expectDax=true}, so it cannot pass there
 * without MAP_SYNC.
 */
class PmRegionDaxTest {
    @TempDir(factory = ShmTempDirFactory.class)
    Path dir;

    @Test
    void mapSyncIsGrantedExactlyOnADaxMount() throws IOException {
        String mount = DaxMount.describe(dir);
        boolean dax = DaxMount.isDax(dir);
        if (Boolean.getBoolean("erda.test.expectDax")) {
            assertThat(dax).as("erda.test.expectDax: %s is on %s", dir, mount).isTrue();
        }
        try (PmRegion region = PmRegion.create(dir.resolve("dax.pm"), PmFileHeader.KIND_LOG_REGION, 4 << 20,
                new long[] {1, 2}, WriteLatencyModel.OFF)) {
            assertThat(region.syncMapped()).as("MAP_SYNC on %s", mount).isEqualTo(dax);
            if (dax) {
                assertThat(region.writesBack()).as("persist on DAX is a cache-line write-back").isTrue();
            }
            for (long at = 0; at < 4 << 20; at += 4096) {
                region.setLongRelease(at, at ^ 0x5A5A_5A5A_5A5A_5A5AL);
            }
            region.persist(0, 4 << 20);
        }
        try (PmRegion reopened = PmRegion.open(dir.resolve("dax.pm"), PmFileHeader.KIND_LOG_REGION, WriteLatencyModel.OFF)) {
            assertThat(reopened.syncMapped()).isEqualTo(dax);
            for (long at = 0; at < 4 << 20; at += 4096) {
                assertThat(reopened.data().get(ValueLayout.JAVA_LONG_UNALIGNED, at)).isEqualTo(at ^ 0x5A5A_5A5A_5A5A_5A5AL);
            }
        }
    }

    /** The mount holding a path, read from /proc/self/mountinfo: its type and whether its options say DAX. */
    static final class DaxMount {
        private DaxMount() {}

        /** The mount's fields: mount point, type, per-mount options and super-block options; null if none holds it. */
        private static String[] holding(Path path) throws IOException {
            Path real = path.toRealPath();
            String[] best = null;
            int bestDepth = -1;
            for (String line : Files.readAllLines(Path.of("/proc/self/mountinfo"))) {
                String[] f = line.split(" ");
                int dash = List.of(f).indexOf("-");
                if (f.length < 6 || dash < 0 || dash + 3 >= f.length) {
                    continue;
                }
                Path point = Path.of(f[4].replace("\\040", " "));
                if (real.startsWith(point) && point.getNameCount() >= bestDepth) {
                    best = new String[] {f[4], f[dash + 1], f[5], f[dash + 3]};
                    bestDepth = point.getNameCount();
                }
            }
            return best;
        }

        /** ext4 and xfs show {@code dax} or {@code dax=always} for a file system mounted with -o dax. */
        static boolean isDax(Path path) throws IOException {
            String[] m = holding(path);
            if (m == null) {
                return false;
            }
            for (String options : new String[] {m[2], m[3]}) {
                for (String o : options.split(",")) {
                    if (o.equals("dax") || o.equals("dax=always")) {
                        return true;
                    }
                }
            }
            return false;
        }

        static String describe(Path path) throws IOException {
            String[] m = holding(path);
            return m == null ? "no mount" : m[1] + " at " + m[0] + " (" + m[2] + "; " + m[3] + ")";
        }
    }
}
