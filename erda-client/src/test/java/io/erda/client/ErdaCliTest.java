package io.erda.client;

import static org.assertj.core.api.Assertions.assertThat;

import io.erda.client.cli.ErdaCli;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/** erda-cli the way redis-cli is used: values raw on stdout, "(not found)" with exit 1, errors on stderr with exit 2. */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class ErdaCliTest {
    private final Servers servers = new Servers("cli", ServerArgs.small());

    @AfterAll
    void stopServers() {
        servers.close();
    }

    @ParameterizedTest
    @MethodSource("io.erda.client.TestFabric#selected")
    void putGetDeleteAndStats(TestFabric fabric) {
        var uri = servers.get(fabric).uri();
        CliRun put = CliRun.run(uri, "put", "greeting", "hello wörld");
        put.assertExit(ErdaCli.EXIT_OK);
        CliRun get = CliRun.run(uri, "get", "greeting");
        get.assertExit(ErdaCli.EXIT_OK);
        assertThat(get.out).isEqualTo("hello wörld\n");
        CliRun.run(uri, "delete", "greeting").assertExit(ErdaCli.EXIT_OK);
        CliRun missing = CliRun.run(uri, "get", "greeting");
        missing.assertExit(ErdaCli.EXIT_NOT_FOUND);
        assertThat(missing.out).isEqualTo("(not found)\n");
        CliRun stats = CliRun.run(uri, "stats");
        stats.assertExit(ErdaCli.EXIT_OK);
        assertThat(stats.out).contains("=");
        // found by CliFuzzTest: picocli read "@..." as an argument file (a stack trace when it was not one)
        CliRun.run(uri, "put", "@/", "@value").assertExit(ErdaCli.EXIT_OK);
        CliRun at = CliRun.run(uri, "get", "@/");
        at.assertExit(ErdaCli.EXIT_OK);
        assertThat(at.out).isEqualTo("@value\n");
    }

    /**
     * The versions are written through one library client, not one erda-cli run each: every run is a connection of
     * its own, and over verbs in scripts/test-softroce's VM a connection costs 0.15 to 0.5 s, so 100 of them made this
     * test most of its group's time (put is erda-cli's in {@link #putGetDeleteAndStats}). The client stays
     * connected through the cleaning, so it reads the cleaned head after the server's HEAD_STATEs; a new erda-cli
     * connection reads it too.
     */
    @Test
    void cleanCompactsAHeadAndPrintsTheReport() {
        var uri = servers.get(TestFabric.network()).uri();
        try (ErdaClient client = ErdaClient.connect(ClientOptions.of(uri).withPoolSize(1))) {
            for (int version = 0; version < 5; version++) {
                for (int k = 0; k < 20; k++) {
                    client.put(bytes("cleaned-" + k), bytes("v" + version));
                }
            }
            CliRun clean = CliRun.run(uri, "clean", "0");
            clean.assertExit(ErdaCli.EXIT_OK);
            assertThat(clean.out).contains("head=0\n", "live_bytes_copied=", "two_sided_ms=");
            assertThat(reportValue(clean.out, "objects_copied")).as("objects copied, in %s", clean.out).isPositive();
            for (int k = 0; k < 20; k++) {
                assertThat(client.get(bytes("cleaned-" + k))).as("cleaned-%d", k).isEqualTo(bytes("v4"));
            }
        }
        for (int k = 0; k < 20; k += 7) {
            CliRun get = CliRun.run(uri, "get", "cleaned-" + k);
            get.assertExit(ErdaCli.EXIT_OK);
            assertThat(get.out).isEqualTo("v4\n");
        }
        CliRun noSuchHead = CliRun.run(uri, "clean", "999");
        noSuchHead.assertExit(ErdaCli.EXIT_ERROR);
        assertThat(noSuchHead.err).contains("head 999 outside");
    }

    private static long reportValue(String report, String key) {
        return report.lines().filter(l -> l.startsWith(key + "=")).mapToLong(l -> Long.parseLong(l.substring(key.length() + 1)))
                .findFirst().orElseThrow(() -> new AssertionError("no " + key + "= in " + report));
    }

    private static byte[] bytes(String s) {
        return s.getBytes(java.nio.charset.StandardCharsets.UTF_8);
    }

    @Test
    void usageErrorsGoToStderrWithExitTwo() {
        var uri = servers.get(TestFabric.network()).uri();
        CliRun unknown = CliRun.run(uri, "frobnicate", "x");
        unknown.assertExit(ErdaCli.EXIT_ERROR);
        assertThat(unknown.err).contains("unknown command 'frobnicate'");
        assertThat(unknown.out).isEmpty();
        CliRun missingValue = CliRun.run(uri, "put", "only-key");
        missingValue.assertExit(ErdaCli.EXIT_ERROR);
        assertThat(missingValue.err).contains("put takes 2 argument(s), got 1");
    }

    @Test
    void unreachableServerIsAnErrorOnStderr() {
        CliRun run = CliRun.run(java.net.URI.create("tcp://127.0.0.1:1"), "get", "k");
        run.assertExit(ErdaCli.EXIT_ERROR);
        assertThat(run.err).startsWith("error: ");
    }
}
