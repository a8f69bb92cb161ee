package io.erda.client;

import io.erda.testsupport.ChildProcess;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.URI;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.regex.Pattern;
import java.util.stream.Stream;

/**
 * A real server process ({@code io.erda.server.ErdaServerMain}) started with this JVM's java binary and test class
 * path, as scripts/erda-server would start it, by {@link ChildProcess}. Its output goes to a log file under target/
 * (named in failures).
 */
final class ServerProcess implements AutoCloseable {
    private static final Pattern READY = Pattern.compile("erda-server listening on (\\S+)");
    /**
     * How long a server may take to print that it listens. Generous: in the SoftRoCE VM (TCG, no KVM) a JVM that
     * shares two emulated CPUs with another lane's tests has taken more than 60 s to get there; a server that fails
     * to start says so at once (its process ends, and the failure names its log).
     */
    private static final long START_TIMEOUT_SECONDS = 180;
    private static final java.util.concurrent.atomic.AtomicInteger LOGS = new java.util.concurrent.atomic.AtomicInteger();

    private final ChildProcess child;
    private final URI uri;

    private ServerProcess(ChildProcess child, URI uri) {
        this.child = child;
        this.uri = uri;
    }

    /**
     * A fresh directory for a store: on tmpfs (PM emulated by DRAM, as docs/ARCHITECTURE.md, "Testing", says tests
     * do), or under the directory the system property erda.test.pmDir names (erda-core's ShmTempDirFactory.PM_DIR:
     * scripts/test-softroce's DAX groups point it at a DAX file system).
     */
    static Path newStoreDir(String name) {
        try {
            String configured = System.getProperty("erda.test.pmDir");
            Path base = configured != null && !configured.isBlank() ? Path.of(configured) : Path.of("/dev/shm");
            return Files.createTempDirectory(Files.isDirectory(base) ? base : Path.of(System.getProperty("java.io.tmpdir")),
                    "erda-client-" + name + "-");
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** Starts a server on {@code dir} over {@code fabric} with extra options; waits until it listens. */
    static ServerProcess start(Path dir, TestFabric fabric, String... options) {
        return start(dir, fabric, java.util.Map.of(), options);
    }

    /** As {@link #start(Path, TestFabric, String...)}, with extra environment variables for the server. */
    static ServerProcess start(Path dir, TestFabric fabric, java.util.Map<String, String> env, String... options) {
        List<String> args = new ArrayList<>(List.of("--dir", dir.toString(), "--listen", fabric.listenUri(dir).toString()));
        args.addAll(List.of(options));
        Path log = logFile(dir.getFileName() + "-" + fabric.name().toLowerCase());
        try {
            ChildProcess child = server(args, log).env(env).ready(READY)
                    .timeout(Duration.ofSeconds(START_TIMEOUT_SECONDS)).start();
            return new ServerProcess(child, URI.create(child.readyValue()));
        } catch (ChildProcess.StartFailure e) {
            throw new IllegalStateException("server did not start within " + START_TIMEOUT_SECONDS + " s: " + e.reason()
                    + "; log " + log + ":\n" + readLog(log), e);
        }
    }

    /**
     * Runs {@code subcommand --dir dir [options]} (verify, rebuild, power-fail) to completion; returns exit code and
     * output.
     */
    static Result runTool(String subcommand, Path dir, String... options) {
        Path log = logFile(dir.getFileName() + "-" + subcommand);
        List<String> args = new ArrayList<>(List.of(subcommand, "--dir", dir.toString()));
        args.addAll(List.of(options));
        ChildProcess child = server(args, log).start();
        try {
            int code = child.awaitExit(Duration.ofDays(1));
            return new Result(code, readLog(log));
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            child.kill();
            throw new IllegalStateException(e);
        }
    }

    record Result(int exitCode, String output) {
    }

    URI uri() {
        return uri;
    }

    Path log() {
        return child.log();
    }

    long pid() {
        return child.pid();
    }

    /** Waits for the process to exit on its own; returns its exit code. */
    int awaitExit(long seconds) throws InterruptedException {
        return child.awaitExit(Duration.ofSeconds(seconds));
    }

    /** kill -9: SIGKILL, no shutdown hook runs. Waits until the process is gone. */
    void kill() {
        child.kill();
    }

    /** SIGTERM (the shutdown hook closes the store), SIGKILL after 10 s. */
    @Override
    public void close() {
        child.stop();
    }

    /** Deletes a test's store directory and the shm fabric directory beside it ({@link TestFabric#shmDirectory}). */
    static void deleteStore(Path dir) {
        deleteTree(dir);
        deleteTree(TestFabric.shmDirectory(dir));
    }

    static void deleteTree(Path dir) {
        if (dir == null || !Files.exists(dir)) {
            return;
        }
        try (Stream<Path> files = Files.walk(dir)) {
            files.sorted(Comparator.reverseOrder()).forEach(f -> f.toFile().delete());
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** ErdaServerMain with {@code args}, as scripts/erda-server starts it; the log starts with its command line. */
    private static ChildProcess.Builder server(List<String> args, Path log) {
        return ChildProcess.java("io.erda.server.ErdaServerMain").name("server").jvmOptions(List.of("-Xmx512m")).args(args)
                .log(log).logCommand(true);
    }

    /** A new log file in the run's server-log directory: a server's, a tool's, or another child's of a test. */
    static Path logFile(String name) {
        try {
            // scripts/test-softroce gives each group a directory of its own: groups run at once in two VMs that
            // share this work tree, and each JVM numbers its logs from 1
            Path dir = Path.of(System.getProperty("erda.test.serverLogs", "target/server-logs"));
            Files.createDirectories(dir);
            return dir.resolve(name + "-" + LOGS.incrementAndGet() + ".log"); // a restart gets its own log
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    static String readLog(Path log) {
        try {
            return Files.readString(log);
        } catch (IOException e) {
            return "(no log: " + e + ")";
        }
    }
}
