package io.erda.client.cli;

import static org.assertj.core.api.Assertions.assertThat;

import com.code_intelligence.jazzer.api.FuzzedDataProvider;
import com.code_intelligence.jazzer.junit.FuzzTest;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Pattern;
import picocli.CommandLine;

/**
 * docs/ARCHITECTURE.md, [bad-input]: any argument vector of erda-cli, run in-process as its main runs it. It ends with
 * success, "not found", or exit {@link ErdaCli#EXIT_ERROR} with a usage or "error:" message; never an exception
 * or a stack trace. No server runs: every argument that names a fabric URI (anything with a scheme) is replaced by
 * one that fails at once and stays on this machine (a refused loopback port, a missing shm directory, an unknown
 * scheme), so the commands get as far as connecting. Arguments are picked from the CLI's words or made up.
 */
class CliFuzzTest {
    private static final Pattern HAS_SCHEME = Pattern.compile("^\\s*[A-Za-z][A-Za-z0-9+.-]*:.*", Pattern.DOTALL);
    private static final String[] UNREACHABLE = {"tcp://127.0.0.1:1", "shm:///dev/shm/erda-cli-fuzz-missing",
            "nosuch://127.0.0.1:1", "tcp://127.0.0.1:99999", "tcp:", "shm:relative"};
    private static final String[] WORDS = {"put", "get", "delete", "stats", "clean", "--timeout", "1", "0", "-1",
            "99999999999999999999", "--help", "-h", "--version", "-V", "key", "value", "", " ", "--", "-", "--timeout=",
            "tcp://127.0.0.1:1"};

    private static final ByteArrayOutputStream out = new ByteArrayOutputStream();
    private static final ByteArrayOutputStream err = new ByteArrayOutputStream();
    /** One command line for all inputs, as picocli allows (every execute resets the options and parses afresh). */
    private static CommandLine cli;

    @FuzzTest
    void arguments(FuzzedDataProvider data) {
        List<String> args = new ArrayList<>();
        int count = data.consumeInt(0, 6);
        for (int i = 0; i < count; i++) {
            String arg = data.consumeBoolean() ? data.pickValue(WORDS) : data.consumeString(24);
            args.add(HAS_SCHEME.matcher(arg).matches() ? UNREACHABLE[Math.floorMod(arg.hashCode(), UNREACHABLE.length)] : arg);
        }
        if (cli == null) {
            cli = ErdaCli.commandLine(new PrintStream(out, true, StandardCharsets.UTF_8),
                    new PrintStream(err, true, StandardCharsets.UTF_8));
        }
        out.reset();
        err.reset();
        int code = cli.execute(args.toArray(String[]::new));
        String errors = err.toString(StandardCharsets.UTF_8);
        assertThat(code).as("exit code for %s", args).isIn(ErdaCli.EXIT_OK, ErdaCli.EXIT_NOT_FOUND, ErdaCli.EXIT_ERROR);
        assertThat(errors).as("stderr for %s", args).doesNotContain("\tat ");
        if (code == ErdaCli.EXIT_ERROR) {
            assertThat(errors).as("stderr for %s", args).isNotBlank();
        }
    }
}
