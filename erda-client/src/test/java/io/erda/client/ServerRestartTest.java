package io.erda.client;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Path;
import java.util.List;
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
    /**
     * PUTs acknowledged before the kill: about five versions of each key (a baseline's replay of older versions
     * included). {@code -Derda.test.restart.acked} lowers it where PUTs are slow (scripts/test-softroce: rxe0 under
     * emulation runs a few dozen a second, and six protocols run there).
     */
    private static final long ACKED_BEFORE_KILL = Long.getLong("erda.test.restart.acked", 3000);

    /**
     * The protocols to kill under: all six, or those {@code -Derda.test.restart.protocols} names (as tools do, comma
     * separated). scripts/test-softroce's one-sided group runs erda (the client's CAS) and redo-log (whose PUTs the
     * server applies into the table through its loopback CAS on rxe0, as it does Read After Write's); RDMP-KV's
     * protocols keep their own pool, the same in either mode.
     */
    static Stream<Arguments> fabricsAndProtocols() {
        String named = System.getProperty("erda.test.restart.protocols", "");
        List<ClientOptions.Protocol> protocols = named.isBlank() ? List.of(ClientOptions.Protocol.values())
                : Stream.of(named.split(",")).map(String::trim).map(ClientOptions.Protocol::fromOption).toList();
        return TestFabric.selected().stream().flatMap(f -> protocols.stream().map(p -> Arguments.of(f, p)));
    }

    @ParameterizedTest
    @MethodSource("fabricsAndProtocols")
    void everyDurablePutSurvivesKillMinusNine(TestFabric fabric, ClientOptions.Protocol protocol) throws Exception {
        Path dir = ServerProcess.newStoreDir("restart-" + fabric.name().toLowerCase() + "-" + protocol.code());
        String[] args = ServerArgs.small().rdmpSaThreshold(256).persistence("read-after-write").toArray();
        PutsUnderKill puts = new PutsUnderKill("restart-", WRITERS, KEYS_PER_WRITER, 500);
        try {
            puts.loadThenKill(ServerProcess.start(dir, fabric, args), protocol, ACKED_BEFORE_KILL);
            try (ServerProcess restarted = ServerProcess.start(dir, fabric, args);
                 KeyValueClient client = PutsUnderKill.reader(restarted.uri(), protocol)) {
                puts.checkReadBack(client, "after the restart");
            }
            ServerProcess.Result verify = ServerProcess.runTool("verify", dir);
            assertThat(verify.exitCode()).as("verify output:\n%s", verify.output()).isZero();
        } finally {
            ServerProcess.deleteStore(dir);
        }
    }
}
