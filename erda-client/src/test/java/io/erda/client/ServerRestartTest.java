package io.erda.client;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;
import java.util.stream.Stream;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * kill -9 of the server process in the middle of a PUT load, then a restart on the same directory: every PUT that
 * was reported durable reads back with its value, nothing torn is visible, and the offline verify is clean. For
 * every protocol: the baselines acknowledge before they apply, so their restart must replay the redo log or ring.
 */
class ServerRestartTest {
    private static final int WRITERS = 2;
    private static final int KEYS_PER_WRITER = 300;
    private static final long ACKED_BEFORE_KILL = 3000;

    static Stream<Arguments> fabricsAndProtocols() {
        return TestFabric.selected().stream().flatMap(f -> Stream.of(ClientOptions.Protocol.values()).map(p -> Arguments.of(f, p)));
    }

    @ParameterizedTest
    @MethodSource("fabricsAndProtocols")
    void everyDurablePutSurvivesKillMinusNine(TestFabric fabric, ClientOptions.Protocol protocol) throws Exception {
        Path dir = ServerProcess.newStoreDir("restart-" + fabric.name().toLowerCase() + "-" + protocol.code());
        String[] args = ServerArgs.small().persistence("read-after-write").toArray();
        // per key: the sequence acknowledged last, and the one in flight (at most one: one writer per key)
        Map<String, Long> acked = new ConcurrentHashMap<>();
        Map<String, Long> inFlight = new ConcurrentHashMap<>();
        AtomicLong ackCount = new AtomicLong();
        try {
            ServerProcess server = ServerProcess.start(dir, fabric, args);
            List<Thread> writers = new ArrayList<>();
            for (int w = 0; w < WRITERS; w++) {
                int writer = w;
                writers.add(Thread.ofPlatform().start(() -> {
                    try (KeyValueClient client = KeyValueClient.connect(ClientOptions.of(server.uri()).withPoolSize(1)
                            .withProtocol(protocol))) {
                        for (long seq = 1; ; seq++) {
                            String key = "restart-" + writer + "-" + seq % KEYS_PER_WRITER;
                            byte[] k = key.getBytes(StandardCharsets.UTF_8);
                            inFlight.put(key, seq);
                            client.put(k, CheckedValue.of(k, seq, 24 + (int) (seq % 500)));
                            acked.put(key, seq);
                            ackCount.incrementAndGet();
                        }
                    } catch (RuntimeException expected) {
                        // the server died under the load
                    }
                }));
            }
            while (ackCount.get() < ACKED_BEFORE_KILL && writers.stream().anyMatch(Thread::isAlive)) {
                Thread.sleep(5);
            }
            server.kill();
            for (Thread t : writers) {
                t.join(60_000);
            }
            assertThat(ackCount.get()).isGreaterThanOrEqualTo(ACKED_BEFORE_KILL);

            try (ServerProcess restarted = ServerProcess.start(dir, fabric, args);
                 ErdaClient client = ErdaClient.connect(restarted.uri())) {
                for (Map.Entry<String, Long> e : acked.entrySet()) {
                    byte[] k = e.getKey().getBytes(StandardCharsets.UTF_8);
                    byte[] value = client.get(k);
                    assertThat(value).as("durable key %s", e.getKey()).isNotNull();
                    long seq = CheckedValue.sequence(k, value); // throws if torn or mixed
                    long flying = inFlight.get(e.getKey());
                    if (seq != e.getValue()) {
                        assertThat(seq).as("key %s: acknowledged %d, in flight %d", e.getKey(), e.getValue(), flying)
                                .isEqualTo(flying);
                    }
                }
                // keys whose only PUT was in flight: absent or whole
                for (Map.Entry<String, Long> e : inFlight.entrySet()) {
                    if (!acked.containsKey(e.getKey())) {
                        byte[] k = e.getKey().getBytes(StandardCharsets.UTF_8);
                        byte[] value = client.get(k);
                        if (value != null) {
                            assertThat(CheckedValue.sequence(k, value)).isEqualTo(e.getValue());
                        }
                    }
                }
            }
            ServerProcess.Result verify = ServerProcess.runTool("verify", dir);
            assertThat(verify.exitCode()).as("verify output:\n%s", verify.output()).isZero();
        } finally {
            ServerProcess.deleteTree(dir);
            ServerProcess.deleteTree(dir.resolveSibling(dir.getFileName() + "-fabric"));
        }
    }
}
