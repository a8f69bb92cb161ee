package io.erda.client;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.stream.Stream;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * Log cleaning in a real server process (paper §4.4): with a small clean threshold the server cleans each head over
 * and over while writers update their keys and check every value they read back; afterwards the store holds about
 * its live data, not every version written, and verify is clean.
 *
 * <p>Over shm only for now. Over tcp a client whose cached head array still names a region the cleaner retired READs
 * it with a deregistered rkey; as on RC verbs the remote-access error breaks its connection (seen as "connection
 * reset" on the next WRITE). The fix is the paper's protocol, not yet built: the server pushes HEAD_STATE, clients
 * go two-sided for a head being cleaned and the server deregisters a retired chain only after they have the new
 * head array.
 */
class CleaningOverNetworkTest {
    private static final int WRITERS = 2;
    private static final int KEYS_PER_WRITER = 100;
    private static final int ROUNDS = 60;

    @ParameterizedTest
    @EnumSource(value = TestFabric.class, names = "SHM")
    void serverCleansHeadsUnderLoadAndEveryReadIsTheLatestWrite(TestFabric fabric) throws Exception {
        Path dir = ServerProcess.newStoreDir("cleaning-" + fabric.name().toLowerCase());
        List<String> args = new ArrayList<>(List.of(new ServerArgs().heads(2).capacity(1 << 12).regionSize(256 << 10)
                .segmentSize(64 << 10).toArray()));
        args.addAll(List.of("--clean-threshold", "300k"));
        Map<String, Long> acked = new ConcurrentHashMap<>();
        try {
            try (ServerProcess server = ServerProcess.start(dir, fabric, args.toArray(String[]::new))) {
                List<Thread> writers = new ArrayList<>();
                List<Throwable> failures = new java.util.concurrent.CopyOnWriteArrayList<>();
                for (int w = 0; w < WRITERS; w++) {
                    int writer = w;
                    writers.add(Thread.ofPlatform().start(() -> {
                        try (ErdaClient client = ErdaClient.connect(ClientOptions.of(server.uri()).withPoolSize(1))) {
                            for (long seq = 1; seq <= (long) ROUNDS * KEYS_PER_WRITER; seq++) {
                                String key = "clean-" + writer + "-" + seq % KEYS_PER_WRITER;
                                byte[] k = key.getBytes(StandardCharsets.UTF_8);
                                client.put(k, CheckedValue.of(k, seq, 200 + (int) (seq % 300)));
                                acked.put(key, seq);
                                byte[] back = client.get(k); // one writer per key: exactly what was just written
                                assertThat(CheckedValue.sequence(k, back)).as(key).isEqualTo(seq);
                            }
                        } catch (Throwable t) {
                            failures.add(t);
                        }
                    }));
                }
                for (Thread t : writers) {
                    t.join();
                }
                assertThat(failures).isEmpty();
                try (ErdaClient client = ErdaClient.connect(server.uri())) {
                    for (Map.Entry<String, Long> e : acked.entrySet()) {
                        byte[] k = e.getKey().getBytes(StandardCharsets.UTF_8);
                        assertThat(CheckedValue.sequence(k, client.get(k))).as(e.getKey()).isEqualTo(e.getValue());
                    }
                }
            }
            // ~6 MB written, ~100 KB live: without cleaning the heads would hold ~24 regions of 256 KiB
            try (Stream<Path> files = Files.list(dir)) {
                long regions = files.filter(f -> f.getFileName().toString().contains("-region-")).count();
                assertThat(regions).as("region files after cleaning").isLessThanOrEqualTo(8);
            }
            ServerProcess.Result verify = ServerProcess.runTool("verify", dir);
            assertThat(verify.exitCode()).as("verify output:\n%s", verify.output()).isZero();
        } finally {
            ServerProcess.deleteTree(dir);
            ServerProcess.deleteTree(dir.resolveSibling(dir.getFileName() + "-fabric"));
        }
    }
}
