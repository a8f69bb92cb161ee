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

    @Test
    void cleanCompactsAHeadAndPrintsTheReport() {
        var uri = servers.get(TestFabric.network()).uri();
        for (int version = 0; version < 5; version++) {
            for (int k = 0; k < 20; k++) {
                CliRun.run(uri, "put", "cleaned-" + k, "v" + version).assertExit(ErdaCli.EXIT_OK);
            }
        }
        CliRun clean = CliRun.run(uri, "clean", "0");
        clean.assertExit(ErdaCli.EXIT_OK);
        assertThat(clean.out).contains("head=0\n", "live_bytes_copied=", "two_sided_ms=");
        for (int k = 0; k < 20; k++) {
            CliRun get = CliRun.run(uri, "get", "cleaned-" + k);
            get.assertExit(ErdaCli.EXIT_OK);
            assertThat(get.out).isEqualTo("v4\n");
        }
        CliRun noSuchHead = CliRun.run(uri, "clean", "999");
        noSuchHead.assertExit(ErdaCli.EXIT_ERROR);
        assertThat(noSuchHead.err).contains("head 999 outside");
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
