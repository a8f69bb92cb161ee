package io.erda.client;

import io.erda.client.cli.ErdaCli;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.net.URI;
import java.nio.charset.StandardCharsets;

/** Output and exit codes of erda-cli, run in-process against a server URI. */
final class CliRun {
    final int exitCode;
    final String out;
    final String err;

    private CliRun(int exitCode, String out, String err) {
        this.exitCode = exitCode;
        this.out = out;
        this.err = err;
    }

    static CliRun run(URI uri, String... args) {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        ByteArrayOutputStream err = new ByteArrayOutputStream();
        String[] argv = new String[args.length + 1];
        argv[0] = uri.toString();
        System.arraycopy(args, 0, argv, 1, args.length);
        int code = ErdaCli.run(new PrintStream(out, true, StandardCharsets.UTF_8), new PrintStream(err, true, StandardCharsets.UTF_8), argv);
        return new CliRun(code, out.toString(StandardCharsets.UTF_8), err.toString(StandardCharsets.UTF_8));
    }

    void assertExit(int expected) {
        assertThat(exitCode).as("exit code; stdout %s; stderr %s", out, err).isEqualTo(expected);
    }
}
