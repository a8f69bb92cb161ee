package io.erda.cluster.harness;

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
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

/**
 * A real cluster member process ({@value #MEMBER_MAIN}, erda-cluster's {@code erda-cluster-server}) started with this
 * JVM's java and class path, which must therefore hold erda-cluster (the tests' of erda-cluster do, and erda-bench's);
 * the class is named, not referenced, so that this harness does not depend on the member it starts. Its output goes to
 * target/cluster-logs (named in failures; tests and {@link ClusterDemo}). Killed with -9 by {@link #kill()}.
 */
public final class MemberProcess implements AutoCloseable {
    /** The member's main class, run in the new process. */
    public static final String MEMBER_MAIN = "io.erda.cluster.ClusterServerMain";
    private static final String READY = " listening on ";

    private final int id;
    private final Process process;
    private final Path log;

    private MemberProcess(int id, Process process, Path log) {
        this.id = id;
        this.process = process;
        this.log = log;
    }

    public static MemberProcess start(URI zk, int id, String... options) {
        Path log;
        try {
            Path dir = Files.createDirectories(Path.of("target", "cluster-logs"));
            log = Files.createTempFile(dir, "member-" + id + "-", ".log");
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        return start(List.of(), log, zk, id, options);
    }

    /**
     * A member started through {@code launcher} (a command that execs the rest of its arguments in place, such as
     * {@code ip netns exec NS}, so the process's pid stays the member's and signals reach it), its output written
     * to {@code log} (replaced).
     */
    public static MemberProcess start(List<String> launcher, Path log, URI zk, int id, String... options) {
        List<String> command = new ArrayList<>(launcher);
        command.addAll(List.of(ProcessHandle.current().info().command().orElse("java"),
                "--enable-native-access=ALL-UNNAMED", "-Xmx256m", "-cp", System.getProperty("java.class.path"),
                MEMBER_MAIN, "--zk", zk.toString(), "--id", String.valueOf(id)));
        command.addAll(List.of(options));
        Process p;
        try {
            p = new ProcessBuilder(command).redirectErrorStream(true).start();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        CompletableFuture<Void> ready = new CompletableFuture<>();
        Thread.ofVirtual().start(() -> pump(p, log, ready));
        try {
            ready.get(60, TimeUnit.SECONDS);
        } catch (Exception e) {
            p.destroyForcibly();
            throw new IllegalStateException("member " + id + " did not start: " + e + "; log " + log, e);
        }
        return new MemberProcess(id, p, log);
    }

    private static void pump(Process p, Path log, CompletableFuture<Void> ready) {
        try (BufferedReader in = new BufferedReader(new InputStreamReader(p.getInputStream(), StandardCharsets.UTF_8));
             PrintWriter out = new PrintWriter(Files.newBufferedWriter(log, StandardCharsets.UTF_8), true)) {
            for (String line; (line = in.readLine()) != null; ) {
                out.println(line);
                if (line.startsWith("erda-cluster-server ") && line.contains(READY)) {
                    ready.complete(null);
                }
            }
        } catch (IOException e) {
            ready.completeExceptionally(e);
        }
        ready.completeExceptionally(new IllegalStateException("exited before it listened"));
    }

    public int id() {
        return id;
    }

    public Path log() {
        return log;
    }

    /** Whether the process is still running (a member halts itself when its lease or session is lost). */
    public boolean alive() {
        return process.isAlive();
    }

    /** kill -9, and wait until the process is gone. */
    public void kill() {
        ServerProcessStop.kill(process);
    }

    /** SIGSTOP: the process stops where it is (a long GC pause, a stalled VM), holding its connections open. */
    public void pause() {
        signal("STOP");
    }

    /**
     * SIGCONT after {@link #pause()}; nothing if the process has ended meanwhile (it may have been halting, its lease
     * run out, at the moment it was stopped: a process that is exiting still takes the SIGSTOP and then ends).
     */
    public void resume() {
        if (process.isAlive()) {
            try {
                signal("CONT");
            } catch (IllegalStateException e) {
                if (process.isAlive()) {
                    throw e;
                }
            }
        }
    }

    private void signal(String name) {
        try {
            int exit = new ProcessBuilder("kill", "-" + name, Long.toString(process.pid())).inheritIO().start().waitFor();
            if (exit != 0) {
                throw new IllegalStateException("kill -" + name + " " + process.pid() + " exited " + exit);
            }
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted signalling member " + id, e);
        }
    }

    @Override
    public void close() {
        ServerProcessStop.stop(process);
    }
}
