package io.erda.client;

import io.erda.server.ServerProcessStop;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.PrintWriter;
import java.io.UncheckedIOException;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

/**
 * A real server process ({@code io.erda.server.ErdaServerMain}) started with this JVM's java binary and test class
 * path, as scripts/erda-server would start it. Its output goes to a log file under target/ (named in failures).
 */
final class ServerProcess implements AutoCloseable {
    private static final String READY = "erda-server listening on ";
    private static final long START_TIMEOUT_SECONDS = 60;
    private static final java.util.concurrent.atomic.AtomicInteger LOGS = new java.util.concurrent.atomic.AtomicInteger();

    private final Process process;
    private final URI uri;
    private final Path log;

    private ServerProcess(Process process, URI uri, Path log) {
        this.process = process;
        this.uri = uri;
        this.log = log;
    }

    /**
     * A fresh directory on tmpfs for a store (PM emulated by DRAM, as docs/ARCHITECTURE.md, "Testing", says tests
     * do).
     */
    static Path newStoreDir(String name) {
        try {
            Path base = Path.of("/dev/shm");
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
        Process p = launch(args, log, env);
        CompletableFuture<URI> ready = new CompletableFuture<>();
        Thread pump = Thread.ofVirtual().start(() -> pump(p, log, ready));
        try {
            URI uri = ready.get(START_TIMEOUT_SECONDS, TimeUnit.SECONDS);
            return new ServerProcess(p, uri, log);
        } catch (Exception e) {
            p.destroyForcibly();
            pump.interrupt();
            throw new IllegalStateException("server did not start within " + START_TIMEOUT_SECONDS + " s: " + e
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
        Process p = launch(args, log, java.util.Map.of());
        pump(p, log, new CompletableFuture<>());
        try {
            int code = p.waitFor();
            return new Result(code, readLog(log));
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            p.destroyForcibly();
            throw new IllegalStateException(e);
        }
    }

    record Result(int exitCode, String output) {
    }

    URI uri() {
        return uri;
    }

    Path log() {
        return log;
    }

    long pid() {
        return process.pid();
    }

    /** Waits for the process to exit on its own; returns its exit code. */
    int awaitExit(long seconds) throws InterruptedException {
        if (!process.waitFor(seconds, TimeUnit.SECONDS)) {
            throw new IllegalStateException("server still running after " + seconds + " s; log " + log + ":\n" + readLog(log));
        }
        return process.exitValue();
    }

    /** kill -9: {@link Process#destroyForcibly()} is SIGKILL on Linux. Waits until the process is gone. */
    void kill() {
        ServerProcessStop.kill(process);
    }

    @Override
    public void close() {
        ServerProcessStop.stop(process);
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

    private static Process launch(List<String> args, Path log, java.util.Map<String, String> env) {
        List<String> command = new ArrayList<>();
        command.add(ProcessHandle.current().info().command().orElse("java"));
        command.add("--enable-native-access=ALL-UNNAMED");
        command.add("-Xmx512m");
        command.add("-cp");
        command.add(System.getProperty("java.class.path"));
        command.add("io.erda.server.ErdaServerMain");
        command.addAll(args);
        try {
            Files.writeString(log, String.join(" ", command.subList(command.size() - args.size() - 1, command.size())) + "\n");
            ProcessBuilder builder = new ProcessBuilder(command).redirectErrorStream(true);
            builder.environment().putAll(env);
            return builder.start();
        } catch (IOException e) {
            throw new UncheckedIOException("cannot start " + command, e);
        }
    }

    /** Copies the process output to its log and completes {@code ready} with the URI of the READY line. */
    private static void pump(Process p, Path log, CompletableFuture<URI> ready) {
        try (BufferedReader in = new BufferedReader(new InputStreamReader(p.getInputStream(), StandardCharsets.UTF_8));
             PrintWriter out = new PrintWriter(Files.newBufferedWriter(log, StandardCharsets.UTF_8,
                     java.nio.file.StandardOpenOption.APPEND), true)) {
            for (String line; (line = in.readLine()) != null; ) {
                out.println(line);
                int at = line.indexOf(READY);
                if (at >= 0 && !ready.isDone()) {
                    ready.complete(URI.create(line.substring(at + READY.length()).trim()));
                }
            }
        } catch (IOException e) {
            ready.completeExceptionally(e);
        }
        ready.completeExceptionally(new IllegalStateException("server exited with no '" + READY + "' line"));
    }

    private static Path logFile(String name) {
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
