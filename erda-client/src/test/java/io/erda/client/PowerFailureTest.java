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
 * Power failures (docs/ARCHITECTURE.md, [persistence], [recovery]): a server process run with
 * {@code --pm-emulation power-failure} is killed with -9 in the middle of a PUT load, {@code erda-server power-fail}
 * collapses its store to what a power failure could leave (seeded: lines written but not made durable kept, dropped
 * or torn), and a restart on the same directory must read back every PUT the client reported durable, and for a
 * PUT in flight either its value or an earlier whole one, never a torn one. Several rounds (seeds, policies) per store, with
 * the cleaner compacting heads under the load, for
 * each persistence method with Erda, and for both baselines under server-flush (where the log regions are not
 * durable on placement, so the baselines' own persists are what counts).
 */
class PowerFailureTest {
    private static final int WRITERS = 4;
    private static final int KEYS_PER_WRITER = 200;
    private static final long ACKED_PER_ROUND = 600;
    /** One power failure per round: seed and policy (random twice, then the harshest, then every line torn). */
    private static final List<String[]> ROUNDS = List.of(new String[] {"11", "random"}, new String[] {"12", "random"},
            new String[] {"13", "drop"}, new String[] {"14", "tear"});

    static Stream<Arguments> scenarios() {
        return TestFabric.selected().stream().filter(f -> f != TestFabric.VERBS) // a kernel RNIC cannot mirror writes
                .flatMap(f -> Stream.of(
                        Arguments.of(f, ClientOptions.Protocol.ERDA, "wsp"),
                        Arguments.of(f, ClientOptions.Protocol.ERDA, "read-after-write"),
                        Arguments.of(f, ClientOptions.Protocol.ERDA, "server-flush"),
                        Arguments.of(f, ClientOptions.Protocol.REDO_LOG, "server-flush"),
                        Arguments.of(f, ClientOptions.Protocol.READ_AFTER_WRITE, "server-flush")));
    }

    @ParameterizedTest(name = "{0} {1} {2}")
    @MethodSource("scenarios")
    void everyDurablePutSurvivesPowerFailures(TestFabric fabric, ClientOptions.Protocol protocol, String method)
            throws Exception {
        Path dir = ServerProcess.newStoreDir("power-" + fabric.name().toLowerCase() + "-" + protocol.code() + "-" + method);
        String[] args = ServerArgs.small().persistence(method).pmEmulation("power-failure")
                .cleanThreshold(96 << 10).toArray();
        // per key: the sequence acknowledged last, and the one written last (acknowledged or in flight at the kill)
        Map<String, Long> acked = new ConcurrentHashMap<>();
        Map<String, Long> inFlight = new ConcurrentHashMap<>();
        AtomicLong nextSequence = new AtomicLong(1);
        try {
            for (String[] round : ROUNDS) {
                ServerProcess server = ServerProcess.start(dir, fabric, args);
                load(server, protocol, acked, inFlight, nextSequence); // ends with kill -9

                ServerProcess.Result collapse = ServerProcess.runTool("power-fail", dir, "--seed", round[0], "--policy",
                        round[1]);
                assertThat(collapse.exitCode()).as("power-fail output:\n%s", collapse.output()).isZero();
                assertThat(collapse.output()).contains("power-fail: seed " + round[0] + ", policy " + round[1] + ", ");
                if (method.equals("wsp")) {
                    assertThat(collapse.output()).contains("keeps no durable images");
                }

                try (ServerProcess restarted = ServerProcess.start(dir, fabric, args);
                     ErdaClient client = ErdaClient.connect(restarted.uri())) {
                    check(client, acked, inFlight, collapse.output());
                }
            }
            ServerProcess.Result verify = ServerProcess.runTool("verify", dir);
            assertThat(verify.exitCode()).as("verify output:\n%s", verify.output()).isZero();
        } finally {
            ServerProcess.deleteTree(dir);
            ServerProcess.deleteTree(dir.resolveSibling(dir.getFileName() + "-fabric"));
        }
    }

    /** PUTs from {@link #WRITERS} clients until {@link #ACKED_PER_ROUND} more are acknowledged; then they stop. */
    private static void load(ServerProcess server, ClientOptions.Protocol protocol, Map<String, Long> acked,
                             Map<String, Long> inFlight, AtomicLong nextSequence) throws InterruptedException {
        AtomicLong ackCount = new AtomicLong();
        List<Thread> writers = new ArrayList<>();
        for (int w = 0; w < WRITERS; w++) {
            int writer = w;
            writers.add(Thread.ofPlatform().start(() -> {
                try (KeyValueClient client = KeyValueClient.connect(ClientOptions.of(server.uri()).withPoolSize(1)
                        .withProtocol(protocol))) {
                    while (true) {
                        long seq = nextSequence.getAndIncrement();
                        String key = "power-" + writer + "-" + seq % KEYS_PER_WRITER;
                        byte[] k = key.getBytes(StandardCharsets.UTF_8);
                        inFlight.put(key, seq);
                        client.put(k, CheckedValue.of(k, seq, 24 + (int) (seq % 700)));
                        acked.put(key, seq);
                        ackCount.incrementAndGet();
                    }
                } catch (RuntimeException expected) {
                    // the server was killed under the load
                }
            }));
        }
        while (ackCount.get() < ACKED_PER_ROUND && writers.stream().anyMatch(Thread::isAlive)) {
            Thread.sleep(5);
        }
        server.kill();
        for (Thread t : writers) {
            t.join(60_000);
        }
        assertThat(ackCount.get()).isGreaterThanOrEqualTo(ACKED_PER_ROUND);
    }

    /**
     * Every acknowledged key reads back whole, as its acknowledged sequence or the one written after it; a key whose
     * only PUT was in flight is absent or whole. Records what each key now holds for the next round.
     */
    private static void check(ErdaClient client, Map<String, Long> acked, Map<String, Long> inFlight, String collapse) {
        for (Map.Entry<String, Long> e : acked.entrySet()) {
            byte[] k = e.getKey().getBytes(StandardCharsets.UTF_8);
            byte[] value = client.get(k);
            assertThat(value).as("durable key %s after\n%s", e.getKey(), collapse).isNotNull();
            long seq = CheckedValue.sequence(k, value); // throws if torn or mixed
            long written = inFlight.get(e.getKey());
            if (seq != e.getValue()) {
                assertThat(seq).as("key %s: acknowledged %d, written last %d, after\n%s", e.getKey(), e.getValue(),
                        written, collapse).isEqualTo(written);
                e.setValue(seq); // the in-flight PUT survived: it is what later rounds must keep
            }
        }
        for (Map.Entry<String, Long> e : inFlight.entrySet()) {
            if (!acked.containsKey(e.getKey())) {
                byte[] k = e.getKey().getBytes(StandardCharsets.UTF_8);
                byte[] value = client.get(k);
                if (value != null) {
                    assertThat(CheckedValue.sequence(k, value)).isEqualTo(e.getValue());
                    acked.put(e.getKey(), e.getValue());
                }
            }
        }
    }
}
