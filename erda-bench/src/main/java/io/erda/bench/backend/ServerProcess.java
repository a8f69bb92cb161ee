package io.erda.bench.backend;

import io.erda.testsupport.ChildProcess;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Path;
import java.util.List;
import java.util.regex.Pattern;

/**
 * A server as a separate JVM running a main class of this class path: started, its URI read from its
 * "... listening on URI" line, stopped on {@link #close()}; or any other server executable ({@link #launch}).
 * Backends wrap it in a {@link StoreServer} that reads the server's counters. Its stdout and stderr go to a log
 * file; a server that exits or stays silent past the start timeout fails the start with the tail of that log.
 * Started and stopped by {@link ChildProcess}.
 */
public final class ServerProcess implements AutoCloseable {

    private static final Pattern LISTENING = Pattern.compile("listening on (\\S+)");

    private final ChildProcess child;

    private ServerProcess(ChildProcess child) {
        this.child = child;
    }

    /** Starts {@code mainClass} with {@code args} in a JVM like this one; returns once it listens. */
    public static ServerProcess start(String name, String mainClass, List<String> args, ServerSettings settings)
        throws IOException {
        return start(name, List.of(), mainClass, args, settings);
    }

    /** As {@link #start(String, String, List, ServerSettings)}, the JVM given {@code jvmOptions} (e.g. a collector, -Xlog). */
    public static ServerProcess start(String name, List<String> jvmOptions, String mainClass, List<String> args,
                                      ServerSettings settings) throws IOException {
        return start(name, jvmOptions, mainClass, args, java.util.Map.of(), settings);
    }

    /** As {@link #start(String, List, String, List, ServerSettings)}, with {@code env} added to its environment. */
    public static ServerProcess start(String name, List<String> jvmOptions, String mainClass, List<String> args,
                                      java.util.Map<String, String> env, ServerSettings settings) throws IOException {
        return start(ChildProcess.java(mainClass).jvmOptions(jvmOptions).args(args).env(env), name, LISTENING,
                settings);
    }

    /**
     * Starts {@code command} (any executable, e.g. a server that is not Java) and returns once a line of its output
     * matches {@code ready}; {@link #uri()} is then the pattern's first group, or the whole match if it has none.
     */
    public static ServerProcess launch(String name, List<String> command, Pattern ready, ServerSettings settings)
        throws IOException {
        return start(ChildProcess.command(command), name, ready, settings);
    }

    private static ServerProcess start(ChildProcess.Builder builder, String name, Pattern ready, ServerSettings settings)
        throws IOException {
        try {
            return new ServerProcess(builder.name(name).log(settings.logDir().resolve(name + ".log")).ready(ready)
                .timeout(settings.startTimeout()).start());
        } catch (ChildProcess.StartFailure e) {
            throw new IOException("server " + e.getMessage(), e);
        } catch (UncheckedIOException e) {
            throw e.getCause();
        }
    }

    public String uri() {
        return child.readyValue();
    }

    /** The file with the server's stdout and stderr. */
    public Path log() {
        return child.log();
    }

    /** The server's process id. */
    public long pid() {
        return child.pid();
    }

    /**
     * Waits up to {@code timeout} for the server to exit on its own; returns its exit code, or null if it is still
     * running.
     */
    public Integer awaitExit(java.time.Duration timeout) throws InterruptedException {
        try {
            return child.awaitExit(timeout);
        } catch (IllegalStateException stillRunning) {
            return null;
        }
    }

    /** kill -9: SIGKILL, no shutdown hook runs; returns once the process is gone. */
    public void kill() {
        child.kill();
    }

    /** A clean stop (SIGTERM: the server's shutdown hook closes the store), SIGKILL after 10 s. */
    @Override
    public void close() {
        child.stop();
    }

    /** The java launcher of the running JVM, so children run on the same JDK. */
    public static String javaExecutable() {
        return ChildProcess.javaExecutable();
    }
}
