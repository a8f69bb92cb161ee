package io.erda.client;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Path;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Power failures (docs/ARCHITECTURE.md, [persistence], [recovery]): a server process run with
 * {@code --pm-emulation power-failure} is killed with -9 in the middle of a PUT load, {@code erda-server power-fail}
 * collapses its store to what a power failure could leave (seeded: lines written but not made durable kept, dropped
 * or torn), and a restart on the same directory must read back every PUT the client reported durable, and for a
 * PUT in flight either its value or an earlier whole one, never a torn one. Several rounds (seeds, policies) per
 * store, with the cleaner compacting heads under the load, for each persistence method with Erda, and for both
 * baselines and RDMP-KV's three protocols under server-flush (where the log regions are not durable on placement, so
 * the baselines' own persists are what counts; RDMP-SA with a 256-byte threshold, so its PUTs take both ways); the
 * contenders get the two harshest rounds, Erda all four.
 */
class PowerFailureTest {
    private static final int WRITERS = 4;
    private static final int KEYS_PER_WRITER = 200;
    private static final long ACKED_PER_ROUND = 600;
    /** One power failure per round: seed and policy (random twice, then the harshest, then every line torn). */
    private static final List<String[]> ROUNDS = List.of(new String[] {"11", "random"}, new String[] {"12", "random"},
            new String[] {"13", "drop"}, new String[] {"14", "tear"});
    /**
     * The contenders' rounds: the two harshest policies only. Each round is a server start, a kill, the collapse and a
     * restart (seconds each), and the random ones add cases between those two for Erda's own paths; the contenders'
     * cases keep the suite's time in bounds.
     */
    private static final List<String[]> CONTENDER_ROUNDS = ROUNDS.subList(2, 4);

    static Stream<Arguments> scenarios() {
        return TestFabric.selected().stream().filter(f -> f != TestFabric.VERBS) // a kernel RNIC cannot mirror writes
                .flatMap(f -> Stream.of(
                        Arguments.of(f, ClientOptions.Protocol.ERDA, "wsp"),
                        Arguments.of(f, ClientOptions.Protocol.ERDA, "read-after-write"),
                        Arguments.of(f, ClientOptions.Protocol.ERDA, "server-flush"),
                        Arguments.of(f, ClientOptions.Protocol.REDO_LOG, "server-flush"),
                        Arguments.of(f, ClientOptions.Protocol.READ_AFTER_WRITE, "server-flush"),
                        Arguments.of(f, ClientOptions.Protocol.HERD, "server-flush"),
                        Arguments.of(f, ClientOptions.Protocol.RDMP_SA, "server-flush"),
                        Arguments.of(f, ClientOptions.Protocol.RDMP_CC, "server-flush")));
    }

    @ParameterizedTest(name = "{0} {1} {2}")
    @MethodSource("scenarios")
    void everyDurablePutSurvivesPowerFailures(TestFabric fabric, ClientOptions.Protocol protocol, String method)
            throws Exception {
        Path dir = ServerProcess.newStoreDir("power-" + fabric.name().toLowerCase() + "-" + protocol.code() + "-"
                + method);
        String[] args = ServerArgs.small().rdmpSaThreshold(256).persistence(method).pmEmulation("power-failure")
                .cleanThreshold(96 << 10).toArray();
        PutsUnderKill puts = new PutsUnderKill("power-", WRITERS, KEYS_PER_WRITER, 700);
        try {
            for (String[] round : protocol == ClientOptions.Protocol.ERDA ? ROUNDS : CONTENDER_ROUNDS) {
                puts.loadThenKill(ServerProcess.start(dir, fabric, args), protocol, ACKED_PER_ROUND);

                ServerProcess.Result collapse = ServerProcess.runTool("power-fail", dir, "--seed", round[0], "--policy",
                        round[1]);
                assertThat(collapse.exitCode()).as("power-fail output:\n%s", collapse.output()).isZero();
                assertThat(collapse.output()).contains("power-fail: seed " + round[0] + ", policy " + round[1] + ", ");
                if (method.equals("wsp")) {
                    assertThat(collapse.output()).contains("keeps no durable images");
                }

                try (ServerProcess restarted = ServerProcess.start(dir, fabric, args);
                     KeyValueClient client = PutsUnderKill.reader(restarted.uri(), protocol)) {
                    puts.checkReadBack(client, "after\n" + collapse.output());
                }
            }
            ServerProcess.Result verify = ServerProcess.runTool("verify", dir);
            assertThat(verify.exitCode()).as("verify output:\n%s", verify.output()).isZero();
        } finally {
            ServerProcess.deleteStore(dir);
        }
    }
}
