package io.erda.server;

import static org.assertj.core.api.Assertions.assertThat;

import com.code_intelligence.jazzer.api.FuzzedDataProvider;
import com.code_intelligence.jazzer.junit.FuzzTest;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import picocli.CommandLine;

/**
 * docs/ARCHITECTURE.md, [bad-input]: any argument vector of erda-server, through the command line main uses
 * ({@link ErdaServerMain#commandLine}: its parsing, converters and handling of bad values), up to the point where
 * the server would start: the directory options and the configuration are checked ({@link ErdaServerMain#config}),
 * nothing is created, opened or listened on. The offline commands (verify, rebuild) are parsed only: they would
 * read or rewrite whatever directory the input names. The result is exit 0 (help, version, a valid command line)
 * or 2 with a message, never an exception or a stack trace.
 */
class ServerCliFuzzTest {
    private static final String[] WORDS = {"--dir", "--ephemeral", "--listen", "--heads", "--table-capacity",
            "--region-size", "--segment-size", "--persistence", "--lease-ms", "--pm-write-latency-ns",
            "--clean-threshold", "--region-pool", "--workers", "verify", "rebuild", "--help", "-h", "--version", "-V", "wsp",
            "read-after-write", "server-flush", "tcp://127.0.0.1:0", "shm:///dev/shm/x", "/dev/shm/x", "0", "1", "-1",
            "64", "1k", "8m", "1g", "9223372036854775807", "99999999999g", "", "--", "--dir="};

    private static final StringWriter out = new StringWriter();
    private static final StringWriter err = new StringWriter();
    /** One command line for all inputs, as picocli allows (every execute resets the options and parses afresh). */
    private static CommandLine cli;

    @FuzzTest
    void arguments(FuzzedDataProvider data) {
        List<String> args = new ArrayList<>();
        int count = data.consumeInt(0, 8);
        for (int i = 0; i < count; i++) {
            args.add(data.consumeBoolean() ? data.pickValue(WORDS) : data.consumeString(24));
        }
        if (cli == null) {
            cli = ErdaServerMain.commandLine(new PrintWriter(out, true), new PrintWriter(err, true));
            cli.setExecutionStrategy(ServerCliFuzzTest::checkOnly);
        }
        out.getBuffer().setLength(0);
        err.getBuffer().setLength(0);
        int code = cli.execute(args.toArray(String[]::new));
        assertThat(code).as("exit code for %s", args).isIn(0, 2);
        assertThat(err.toString()).as("stderr for %s", args).doesNotContain("\tat ");
        if (code == 2) {
            assertThat(err.toString()).as("stderr for %s", args).isNotBlank();
        }
    }

    /** What call() does before the server starts, with picocli's own handling of help and failures around it. */
    private static int checkOnly(CommandLine.ParseResult parsed) {
        Integer help = CommandLine.executeHelpRequest(parsed);
        if (help != null) {
            return help;
        }
        CommandLine last = parsed.asCommandLineList().getLast();
        if (last.getCommand() instanceof ErdaServerMain main) {
            main.checkDirectoryOptions(); // a ParameterException: picocli prints it with the usage
            try {
                main.config(main.dir != null ? main.dir : Path.of("/dev/shm/erda-ephemeral-not-created"));
            } catch (RuntimeException e) {
                throw new CommandLine.ExecutionException(last, "checking the options failed", e);
            }
        }
        return 0;
    }
}
