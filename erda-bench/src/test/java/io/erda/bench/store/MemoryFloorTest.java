package io.erda.bench.store;

import static org.assertj.core.api.Assertions.assertThat;

import io.erda.bench.backend.ScratchDirectory;
import io.erda.client.ClientOptions;
import io.erda.client.ErdaClient;
import io.erda.protocol.memory.ObjectLayout;
import io.erda.server.RequestServer;
import io.erda.server.ServerConfig;
import java.io.IOException;
import java.net.URI;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * {@link MemoryFloor} reads a live store's files as a GET would: every loaded key is found through its table window
 * and leads to an object of that key (checked during its warm-up), and keys the store does not hold are counted.
 */
class MemoryFloorTest {
    private static final int KEYS = 3_000;
    private static final int VALUE = 1024;
    private static final byte[] USER = {'u', 's', 'e', 'r'};
    private static final byte[] NONE = {'n', 'o', 'n', 'e'};

    private Path work;
    private RequestServer server;

    @BeforeEach
    void loadAStoreWithTwoRegionsPerHead() throws IOException {
        work = Files.createTempDirectory(Path.of("/dev/shm"), "memory-floor-");
        // 1 MiB regions: 3,000 objects of about 1 KiB over 4 heads fill the first region of each and go on in a second
        ServerConfig config = ServerConfig.defaults(work.resolve("store"), URI.create("shm://" + work.resolve("fabric")))
                .withGeometry(ServerConfig.DEFAULT_HEADS, 16_384, 1 << 20, 1 << 20);
        server = RequestServer.start(config);
        try (ErdaClient client = ErdaClient.connect(ClientOptions.of(server.uri()).withPoolSize(1))) {
            for (int i = 0; i < KEYS; i++) {
                client.put(ScaleBench.key(USER, i), new byte[VALUE]);
            }
        }
    }

    @AfterEach
    void stop() throws IOException {
        if (server != null) {
            server.close();
        }
        ScratchDirectory.delete(work);
    }

    @Test
    void everyLoadedKeyIsLookedUpToItsOwnObjectAcrossRegions() {
        assertThat(regionFiles()).as("the load spans more than one region per head").isGreaterThan(ServerConfig.DEFAULT_HEADS);
        int objectBytes = (int) ObjectLayout.length(ScaleBench.key(USER, 0).length, VALUE);
        MemoryFloor.Result result = MemoryFloor.measure(work.resolve("store"), KEYS, i -> ScaleBench.key(USER, i),
                objectBytes, 0.2);
        assertThat(result.lookups()).isGreaterThan(10_000);
        assertThat(result.missing()).isZero();
        assertThat(result.lookupNanos()).isPositive();
    }

    @Test
    void keysTheStoreDoesNotHoldAreCountedAsMissing() {
        MemoryFloor.Result result = MemoryFloor.measure(work.resolve("store"), KEYS, i -> ScaleBench.key(NONE, i),
                1088, 0.1);
        assertThat(result.missing()).isEqualTo(result.lookups()).isPositive();
    }

    private long regionFiles() {
        try (var files = Files.list(work.resolve("store"))) {
            return files.filter(f -> f.getFileName().toString().matches("head-\\d+-region-\\d+\\.pm")).count();
        } catch (IOException e) {
            throw new java.io.UncheckedIOException(e);
        }
    }
}
