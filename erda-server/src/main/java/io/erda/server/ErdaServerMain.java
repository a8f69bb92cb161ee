package io.erda.server;

import io.erda.core.pm.PmFormatException;
import io.erda.core.pm.PmPermissionException;
import io.erda.core.pm.PowerFailure;
import io.erda.fabric.FabricException;
import io.erda.protocol.PmConfiguration;
import io.erda.server.offline.StoreVerifier;
import io.erda.server.offline.TableRebuilder;
import io.erda.server.platform.HugePagesUnavailableException;
import java.io.IOException;
import java.io.PrintWriter;
import java.io.UncheckedIOException;
import java.net.URI;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Comparator;
import java.util.Locale;
import java.util.concurrent.Callable;
import java.util.concurrent.CountDownLatch;
import java.util.stream.Stream;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;
import picocli.CommandLine;

/**
 * {@code erda-server [options]} runs a server; {@code erda-server verify --dir DIR},
 * {@code erda-server rebuild --dir DIR} and {@code erda-server power-fail --dir DIR --seed S} work on a stopped store.
 */
@Command(name = "erda-server", mixinStandardHelpOptions = true, sortOptions = false,
        subcommands = {ErdaServerMain.Verify.class, ErdaServerMain.Rebuild.class, ErdaServerMain.PowerFail.class},
        description = {"Runs an Erda server: a log-structured KV store in persistent memory that clients read and "
                + "write with one-sided RDMA.",
                "Creates the store in --dir if it holds none, else reopens and recovers it. On startup prints "
                + "'erda-server listening on URI'. SIGTERM closes it cleanly."},
        exitCodeListHeading = "Exit codes:%n",
        exitCodeList = {"0:stopped cleanly", "2:bad option, the directory holds another format or geometry, or "
                + "--huge-pages asks for what the system does not give"})
public final class ErdaServerMain implements Callable<Integer> {
    @Spec
    CommandSpec spec;

    @Option(names = "--dir", paramLabel = "DIR", description = "PM directory of the store (tmpfs /dev/shm or a DAX "
            + "mount). Required unless --ephemeral.")
    Path dir;

    @Option(names = "--ephemeral", description = "Use a fresh directory under /dev/shm (or the temp dir), deleted "
            + "at exit. For tests and demos.")
    boolean ephemeral;

    @Option(names = "--listen", paramLabel = "URI", defaultValue = "tcp://127.0.0.1:7100",
            description = "Fabric URI to listen on: tcp://host:port (port 0 picks one) or shm:///dir. Default: ${DEFAULT-VALUE}.")
    URI listen;

    @Mixin
    ServerOptions store = new ServerOptions();

    @Option(names = "--workers", paramLabel = "N", defaultValue = "1",
            description = "Request threads. Default: ${DEFAULT-VALUE}.")
    int workers;

    @Override
    public Integer call() throws Exception {
        checkDirectoryOptions();
        Path directory = storeDirectory();
        ServerConfig config = config(directory);
        RequestServer server = RequestServer.start(config);
        server.startCleaning();
        CountDownLatch stopped = new CountDownLatch(1);
        Runtime.getRuntime().addShutdownHook(new Thread(() -> {
            server.close();
            if (ephemeral) {
                deleteTree(directory);
            }
            stopped.countDown();
        }, "erda-shutdown"));
        PrintWriter out = spec.commandLine().getOut();
        out.println(server.store().recoverySummary());
        PmConfiguration pm = config.pmEmulation().configuration(config.persistence());
        out.println("erda-server: persistence " + config.persistence().option() + " in " + pm.label() + ", "
                + config.persistence().reasonIn(pm) + (config.pmEmulation().powerFailure() ? "; power failures emulated"
                : ""));
        out.println("erda-server listening on " + server.uri());
        out.flush();
        stopped.await();
        return 0;
    }

    /** The server's configuration as the options give it, checked (a bad value throws naming it); starts nothing. */
    ServerConfig config(Path directory) {
        return store.config(directory, listen, workers);
    }

    /** Exactly one of --dir and --ephemeral. */
    void checkDirectoryOptions() {
        if (dir != null && ephemeral) {
            throw new CommandLine.ParameterException(spec.commandLine(), "--dir and --ephemeral exclude each other");
        }
        if (dir == null && !ephemeral) {
            throw new CommandLine.ParameterException(spec.commandLine(),
                    "a PM directory is required: give --dir DIR (or --ephemeral for a throw-away store)");
        }
    }

    private Path storeDirectory() throws IOException {
        if (dir != null) {
            return dir;
        }
        Path base = Files.isWritable(Path.of("/dev/shm")) ? Path.of("/dev/shm") : Path.of(System.getProperty("java.io.tmpdir"));
        return Files.createTempDirectory(base, "erda-ephemeral-");
    }

    private static void deleteTree(Path root) {
        try (Stream<Path> walk = Files.walk(root)) {
            walk.sorted(Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** What the offline commands share: a stopped store's directory and the command's output. */
    abstract static class OfflineCommand implements Callable<Integer> {
        @Spec
        CommandSpec spec;

        @Option(names = "--dir", paramLabel = "DIR", required = true, description = "PM directory of the store.")
        Path dir;

        @Option(names = "--group", paramLabel = "NAME", description = "The group the server shares the store with "
                + "(its --group), whose write access is then accepted.")
        String group;

        void print(Object result) {
            spec.commandLine().getOut().println(result);
        }
    }

    /** Offline: checks every entry and every log object of a stopped store. */
    @Command(name = "verify", mixinStandardHelpOptions = true,
            description = "Checks a stopped store: every entry's current object validates, previous offsets are in "
                    + "range, every head's log scans (unreferenced torn areas are counted, not failures). Exit 0 iff clean.")
    static final class Verify extends OfflineCommand {
        @Override
        public Integer call() {
            StoreVerifier.Report report = StoreVerifier.verify(dir, group);
            print(report);
            return report.clean() ? 0 : 1;
        }
    }

    /** Offline: rebuilds the table from the logs. */
    @Command(name = "rebuild", mixinStandardHelpOptions = true,
            description = "Rebuilds a stopped store's hash table from its logs: the newest complete version of each "
                    + "key by log order; a key whose newest version is a tombstone stays deleted.")
    static final class Rebuild extends OfflineCommand {
        @Override
        public Integer call() {
            print(TableRebuilder.rebuild(dir, group));
            return 0;
        }
    }

    /** Offline: what a power failure could leave of a store run with --pm-emulation power-failure. */
    @Command(name = "power-fail", mixinStandardHelpOptions = true,
            description = {"Collapses a stopped store (run after its server process was killed, e.g. kill -9) to what a "
                    + "power failure could leave, for a server run with --pm-emulation power-failure: every 64-byte line "
                    + "of a PM file that differs from its durable image NAME.durable was written but not made durable, "
                    + "and is kept as written, dropped back to its durable content, or torn per 8-byte word. The result "
                    + "becomes the file and its image; then restart the server on the directory with the same options.",
                "Prints one line per file with such lines (kept, dropped, torn) and a total line starting "
                    + "'power-fail: seed'. A directory without images (a WSP configuration, or no emulation) is left as it is."})
    static final class PowerFail extends OfflineCommand {
        @Option(names = "--seed", paramLabel = "S", required = true,
                description = "Seed of the random fates (the same seed on the same files does the same).")
        long seed;

        @Option(names = "--policy", paramLabel = "P", defaultValue = "random",
                description = "random (each line kept, dropped or torn, one in three each), drop (every line dropped: "
                        + "the harshest), keep (nothing lost), tear (every line torn). Default: ${DEFAULT-VALUE}.")
        String policy;

        @Override
        public Integer call() {
            if (!PowerFailure.enabled(dir)) {
                print("power-fail: " + dir + " keeps no durable images (no power-failure emulation, or a WSP "
                        + "configuration, under which a power failure loses nothing written)");
            }
            print(PowerFailure.collapse(dir, seed, PowerFailure.Policy.of(policy)));
            return 0;
        }
    }

    /** Byte counts with an optional k/m/g suffix (powers of 1024); also used by erda-bench's commands. */
    public static final class SizeConverter implements CommandLine.ITypeConverter<Long> {
        @Override
        public Long convert(String value) {
            String v = value.trim().toLowerCase(Locale.ROOT);
            long unit = switch (v.isEmpty() ? ' ' : v.charAt(v.length() - 1)) {
                case 'k' -> 1L << 10;
                case 'm' -> 1L << 20;
                case 'g' -> 1L << 30;
                default -> 1;
            };
            String digits = unit == 1 ? v : v.substring(0, v.length() - 1);
            try {
                return Math.multiplyExact(Long.parseLong(digits), unit);
            } catch (NumberFormatException | ArithmeticException e) {
                throw new CommandLine.TypeConversionException("'" + value + "' is not a size (bytes, or a number with k, m or g)");
            }
        }
    }

    /**
     * The JVM options a server process runs with by default (resource {@code server-jvm-options}: the collector, and
     * why), which scripts/erda-server adds to the JVM it starts; benchmarks that start a server process use them too.
     */
    public static java.util.List<String> defaultJvmOptions() {
        try (var in = ErdaServerMain.class.getResourceAsStream("server-jvm-options")) {
            if (in == null) {
                throw new IllegalStateException("resource io/erda/server/server-jvm-options is missing from the class path");
            }
            return new String(in.readAllBytes(), java.nio.charset.StandardCharsets.UTF_8).lines().map(String::strip)
                    .filter(l -> !l.isEmpty() && !l.startsWith("#")).toList();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** Runs the command line; returns the exit code. */
    public static int run(PrintWriter out, PrintWriter err, String... args) {
        return commandLine(out, err).execute(args);
    }

    /** The command line with its output and its handling of bad values (exit 2 with the message). */
    static CommandLine commandLine(PrintWriter out, PrintWriter err) {
        return reportingBadValues(new CommandLine(new ErdaServerMain()).setOut(out).setErr(err), "erda-server");
    }

    /**
     * {@code cli} (a server command: erda-server, a cluster member) answering a bad value or a store it must refuse
     * with exit 2 and one line, {@code name: message}, instead of a stack trace; and taking "@x" as a value (a
     * directory, a URI), never as a file of arguments to read.
     */
    public static CommandLine reportingBadValues(CommandLine cli, String name) {
        cli.setExpandAtFiles(false);
        cli.setExecutionExceptionHandler((e, commandLine, parsed) -> {
            if (e instanceof PmFormatException || e instanceof PmPermissionException || e instanceof IllegalArgumentException
                    || e instanceof UncheckedIOException || e instanceof FabricException
                    || e instanceof HugePagesUnavailableException) {
                commandLine.getErr().println(name + ": " + e.getMessage());
                commandLine.getErr().flush();
                return 2;
            }
            throw e;
        });
        return cli;
    }

    public static void main(String[] args) {
        int code = run(new PrintWriter(System.out, true), new PrintWriter(System.err, true), args);
        System.exit(code);
    }
}
