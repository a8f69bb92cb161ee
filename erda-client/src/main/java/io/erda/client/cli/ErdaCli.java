package io.erda.client.cli;

import io.erda.client.ErdaClient;
import io.erda.client.ErdaException;
import io.erda.client.ClientOptions;
import io.erda.client.KeyValueClient;
import io.erda.fabric.FabricException;
import java.io.PrintStream;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Callable;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Parameters;

/**
 * {@code erda-cli URI put KEY VALUE | get KEY | delete KEY | stats | clean HEAD}, used like redis-cli: a value is printed raw
 * (UTF-8) with a newline; a missing key prints {@code (not found)} and exits 1; errors go to stderr with exit 2.
 */
@Command(name = "erda-cli", mixinStandardHelpOptions = true, sortOptions = false,
        description = {"Talks to an Erda server: put KEY VALUE | get KEY | delete KEY | stats | clean HEAD",
                "clean HEAD: the server cleans head HEAD now (log cleaning, paper §4.4) while it goes on serving, and "
                        + "prints the run's report (bytes before/after, live bytes copied, phase times, time in "
                        + "two-sided mode). Waits for the whole run (see --timeout)."},
        exitCodeOnInvalidInput = ErdaCli.EXIT_ERROR, exitCodeOnExecutionException = ErdaCli.EXIT_ERROR)
public final class ErdaCli implements Callable<Integer> {
    public static final int EXIT_OK = 0;
    public static final int EXIT_NOT_FOUND = 1;
    public static final int EXIT_ERROR = 2;

    @Parameters(index = "0", paramLabel = "URI", description = "server, e.g. tcp://127.0.0.1:7000 or shm:///dev/shm/erda, or a cluster, zk://host:port/erda")
    URI uri;

    @Parameters(index = "1", paramLabel = "COMMAND", description = "put, get, delete, stats or clean")
    String command;

    @Parameters(index = "2..*", paramLabel = "ARG", description = "KEY [VALUE], or HEAD for clean")
    List<String> args = List.of();

    @picocli.CommandLine.Option(names = "--timeout", paramLabel = "SECONDS", defaultValue = "600",
            description = "Longest wait for one reply (a clean of a large head takes long). Default: ${DEFAULT-VALUE}.")
    long timeoutSeconds;

    private final PrintStream out;
    private final PrintStream err;

    ErdaCli(PrintStream out, PrintStream err) {
        this.out = out;
        this.err = err;
    }

    public static void main(String[] argv) {
        System.exit(run(System.out, System.err, argv));
    }

    /** Runs one command; returns the exit code. */
    public static int run(PrintStream out, PrintStream err, String... argv) {
        return commandLine(out, err).execute(argv);
    }

    /** The command line with its output and its handling of failures; reusable (each execute parses afresh). */
    static CommandLine commandLine(PrintStream out, PrintStream err) {
        CommandLine cl = new CommandLine(new ErdaCli(out, err));
        // An argument is what it says: "@name" is a key or value, not picocli's argument file to read instead.
        cl.setExpandAtFiles(false);
        cl.setOut(new java.io.PrintWriter(out, true));
        cl.setErr(new java.io.PrintWriter(err, true));
        // call() reports the failures it expects (server, fabric, bad argument) as "error: ..." itself; an I/O
        // failure is reported the same way. Anything else is a bug and keeps its stack trace.
        cl.setExecutionExceptionHandler((e, line, parsed) -> {
            if (!(e instanceof java.io.UncheckedIOException)) {
                throw e;
            }
            err.println("error: " + e.getMessage());
            return EXIT_ERROR;
        });
        return cl;
    }

    @Override
    public Integer call() {
        int expected = switch (command) {
            case "put" -> 2;
            case "get", "delete", "clean" -> 1;
            case "stats" -> 0;
            default -> -1;
        };
        if (expected < 0) {
            err.println("error: unknown command '" + command + "'; expected put, get, delete, stats or clean");
            return EXIT_ERROR;
        }
        if (args.size() != expected) {
            err.println("error: " + command + " takes " + expected + " argument(s), got " + args.size());
            return EXIT_ERROR;
        }
        // KeyValueClient.connect: a zk:// cluster URI too, when erda-cluster-client is on the class path ([cluster])
        try (KeyValueClient client = KeyValueClient.connect(ClientOptions.of(uri).withPoolSize(1)
                .withOperationTimeout(java.time.Duration.ofSeconds(timeoutSeconds)))) {
            switch (command) {
                case "put" -> {
                    client.put(bytes(args.get(0)), bytes(args.get(1)));
                    out.println("OK");
                }
                case "get" -> {
                    byte[] value = client.get(bytes(args.get(0)));
                    if (value == null) {
                        out.println("(not found)");
                        return EXIT_NOT_FOUND;
                    }
                    out.println(new String(value, StandardCharsets.UTF_8));
                }
                case "delete" -> {
                    client.delete(bytes(args.get(0)));
                    out.println("OK");
                }
                case "clean" -> {
                    for (Map.Entry<String, String> e : oneServer(client).clean(head(args.get(0))).entrySet()) {
                        out.println(e.getKey() + "=" + e.getValue());
                    }
                }
                default -> {
                    for (Map.Entry<String, String> e : oneServer(client).serverStats().entrySet()) {
                        out.println(e.getKey() + "=" + e.getValue());
                    }
                }
            }
            return EXIT_OK;
        } catch (ErdaException | FabricException | IllegalArgumentException | IllegalStateException e) {
            err.println("error: " + e.getMessage());
            return EXIT_ERROR;
        }
    }

    /** stats and clean talk to one server: a cluster's URI names none. */
    private ErdaClient oneServer(KeyValueClient client) {
        if (client instanceof ErdaClient one) {
            return one;
        }
        throw new IllegalArgumentException(command + " talks to one server; " + uri + " is a cluster: give one server's "
                + "fabric URI (its registration in ZooKeeper names it)");
    }

    private static int head(String s) {
        try {
            return Integer.parseInt(s);
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException("head '" + s + "' is not a number");
        }
    }

    private static byte[] bytes(String s) {
        return s.getBytes(StandardCharsets.UTF_8);
    }
}
