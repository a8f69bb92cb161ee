package io.erda.core.testing;

import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.extension.AnnotatedElementContext;
import org.junit.jupiter.api.extension.ExtensionContext;
import org.junit.jupiter.api.io.TempDirFactory;

/**
 * Temporary directories for PM files: under {@link #PM_DIR} when set, else on tmpfs (/dev/shm) when present (PM
 * emulated on DRAM, where msync is cheap).
 */
public final class ShmTempDirFactory implements TempDirFactory {
    /**
     * System property: the directory the tests make their PM directories under instead of /dev/shm. scripts/test-softroce's
     * DAX groups set it to the DAX file system of scripts/softroce-vm --pmem, so the store maps its files MAP_SYNC and
     * persists with cache-line write-backs.
     */
    public static final String PM_DIR = "erda.test.pmDir";

    /** Where PM directories for tests are made: {@link #PM_DIR}, else /dev/shm if writable, else java.io.tmpdir. */
    public static Path base() {
        String configured = System.getProperty(PM_DIR);
        if (configured != null && !configured.isBlank()) {
            Path dir = Path.of(configured);
            if (!Files.isDirectory(dir) || !Files.isWritable(dir)) {
                throw new IllegalStateException(PM_DIR + "=" + configured + " is not a writable directory");
            }
            return dir;
        }
        Path shm = Path.of("/dev/shm");
        return Files.isDirectory(shm) && Files.isWritable(shm) ? shm : Path.of(System.getProperty("java.io.tmpdir"));
    }

    @Override
    public Path createTempDirectory(AnnotatedElementContext elementContext, ExtensionContext extensionContext) throws Exception {
        return Files.createTempDirectory(base(), "erda-test-");
    }
}
