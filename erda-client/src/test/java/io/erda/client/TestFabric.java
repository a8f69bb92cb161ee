package io.erda.client;

import java.net.URI;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;

/**
 * The providers the end-to-end tests run over. Which of them a run uses comes from one place, the system property
 * {@code erda.test.fabrics} (comma-separated, default {@code tcp,shm}): the suites take their fabric argument from
 * {@link #selected()}. VERBS needs a real RDMA device, so only scripts/test-softroce selects it
 * ({@code -Derda.test.fabrics=verbs}, inside scripts/softroce-vm, listening on {@code erda.softroce.address}).
 */
enum TestFabric {
    TCP, SHM, VERBS;

    static final String PROPERTY = "erda.test.fabrics";
    static final String DEFAULT = "tcp,shm";

    /** The fabrics this run's suites go over, in the order the property names them. */
    static List<TestFabric> selected() {
        String value = System.getProperty(PROPERTY, DEFAULT);
        List<TestFabric> fabrics = new ArrayList<>();
        for (String name : value.split(",")) {
            if (name.isBlank()) {
                continue;
            }
            try {
                TestFabric f = valueOf(name.strip().toUpperCase(Locale.ROOT));
                if (!fabrics.contains(f)) {
                    fabrics.add(f);
                }
            } catch (IllegalArgumentException e) {
                throw new IllegalArgumentException(PROPERTY + "=" + value + ": no fabric '" + name.strip() + "' (known: "
                        + Arrays.toString(values()).toLowerCase(Locale.ROOT) + ")");
            }
        }
        if (fabrics.isEmpty()) {
            throw new IllegalArgumentException(PROPERTY + "=" + value + " selects no fabric");
        }
        return fabrics;
    }

    /**
     * For a test that runs over one network fabric only, one where a connection breaks on a stale rkey (as an RC
     * queue pair does): verbs when this run selected it, else tcp.
     */
    static TestFabric network() {
        return selected().contains(VERBS) ? VERBS : TCP;
    }

    /** The directory beside a store in {@code storeDir} where its shm server keeps its fabric files. */
    static Path shmDirectory(Path storeDir) {
        return storeDir.resolveSibling(storeDir.getFileName() + "-fabric");
    }

    /** Where a server for a store in {@code storeDir} listens (tcp, verbs: any free port; shm: a directory beside the store). */
    URI listenUri(Path storeDir) {
        return switch (this) {
            case TCP -> URI.create("tcp://127.0.0.1:0");
            case SHM -> URI.create("shm://" + shmDirectory(storeDir).toAbsolutePath());
            case VERBS -> URI.create("verbs://" + System.getProperty("erda.softroce.address", "192.0.2.1") + ":0");
        };
    }
}
