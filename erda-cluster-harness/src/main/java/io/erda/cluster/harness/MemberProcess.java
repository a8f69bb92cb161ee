package io.erda.cluster.harness;

import io.erda.testsupport.ChildProcess;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.URI;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Pattern;

/**
 * A real cluster member process ({@value #MEMBER_MAIN}, erda-cluster's {@code erda-cluster-server}) started with this
 * JVM's java and class path, which must therefore hold erda-cluster (the tests' of erda-cluster do, and erda-bench's);
 * the class is named, not referenced, so that this harness does not depend on the member it starts. Its output goes to
 * target/cluster-logs (named in failures; tests and {@link ClusterDemo}). Killed with -9 by {@link #kill()}. Started
 * and signalled by {@link ChildProcess}.
 */
public final class MemberProcess implements AutoCloseable {
    /** The member's main class, run in the new process. */
    public static final String MEMBER_MAIN = "io.erda.cluster.ClusterServerMain";
    private static final Pattern READY = Pattern.compile("^erda-cluster-server (?:.* )?listening on ");

    private final int id;
    private final ChildProcess child;

    private MemberProcess(int id, ChildProcess child) {
        this.id = id;
        this.child = child;
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
        List<String> args = new ArrayList<>(List.of("--zk", zk.toString(), "--id", String.valueOf(id)));
        args.addAll(List.of(options));
        try {
            ChildProcess child = ChildProcess.java(MEMBER_MAIN).name("member-" + id).launcher(launcher)
                    .jvmOptions(List.of("-Xmx256m")).args(args).log(log).ready(READY).timeout(Duration.ofSeconds(60))
                    .start();
            return new MemberProcess(id, child);
        } catch (ChildProcess.StartFailure e) {
            throw new IllegalStateException("member " + id + " did not start: " + e.reason() + "; log " + log, e);
        }
    }

    public int id() {
        return id;
    }

    public Path log() {
        return child.log();
    }

    /** Whether the process is still running (a member halts itself when its lease or session is lost). */
    public boolean alive() {
        return child.alive();
    }

    /** kill -9, and wait until the process is gone. */
    public void kill() {
        child.kill();
    }

    /** SIGSTOP: the process stops where it is (a long GC pause, a stalled VM), holding its connections open. */
    public void pause() {
        child.pause();
    }

    /**
     * SIGCONT after {@link #pause()}; nothing if the process has ended meanwhile (it may have been halting, its lease
     * run out, at the moment it was stopped: a process that is exiting still takes the SIGSTOP and then ends).
     */
    public void resume() {
        child.resume();
    }

    /** SIGTERM (the member leaves and closes its store), SIGKILL after 10 s. */
    @Override
    public void close() {
        child.stop();
    }
}
