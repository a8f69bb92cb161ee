package io.erda.bench.backend;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.PrintWriter;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * A server as a separate JVM running a main class of this class path: started, its URI read from its
 * "... listening on URI" line, stopped on {@link #close()}; or any other server executable ({@link #launch}).
 * Backends wrap it in a {@link StoreServer} that reads the server's counters. Its stdout and stderr go to a log
 * file; a server that exits or stays silent past the start timeout fails the start with the tail of that log.
 */
public final class ServerProcess implements AutoCloseable {

    private static final Pattern LISTENING = Pattern.compile("listening on (\\S+)");
    private static final int TAIL_LINES = 20;

    private final Process process;
    private final String uri;
    private final Path log;

    private ServerProcess(Process process, String uri, Path log) {
        this.process = process;
        this.uri = uri;
        this.log = log;
    }

    /** Starts {@code mainClass} with {@code args} in a JVM like this one; returns once it listens. */
    public static ServerProcess start(String name, String mainClass, List<String> args, ServerSettings settings)
        throws IOException {
        return start(name, List.of(), mainClass, args, settings);
    }

    /** As {@link #start(String, String, List, ServerSettings)}, the JVM given {@code jvmOptions} (e.g. a collector, -Xlog). */
    public static ServerProcess start(String name, List<String> jvmOptions, String mainClass, List<String> args,
                                      ServerSettings settings) throws IOException {
        List<String> command = new ArrayList<>(List.of(javaExecutable(), "--enable-native-access=ALL-UNNAMED"));
        command.addAll(jvmOptions);
        command.addAll(List.of("-cp", System.getProperty("java.class.path"), mainClass));
        command.addAll(args);
        return launch(name, command, LISTENING, settings);
    }

    /**
     * Starts {@code command} (any executable, e.g. a server that is not Java) and returns once a line of its output
     * matches {@code ready}; {@link #uri()} is then the pattern's first group, or the whole match if it has none.
     */
    public static ServerProcess launch(String name, List<String> command, Pattern ready, ServerSettings settings)
        throws IOException {
        Files.createDirectories(settings.logDir());
        Path log = settings.logDir().resolve(name + ".log");
        Process p = new ProcessBuilder(command).redirectErrorStream(true).start();
        Deque<String> tail = new ArrayDeque<>();
        CompletableFuture<String> listening = new CompletableFuture<>();
        Thread pump = Thread.ofPlatform().daemon().name(name + "-output").start(() -> {
            try (BufferedReader in = new BufferedReader(new InputStreamReader(p.getInputStream(), StandardCharsets.UTF_8));
                 PrintWriter out = new PrintWriter(Files.newBufferedWriter(log, StandardCharsets.UTF_8), true)) {
                for (String line; (line = in.readLine()) != null; ) {
                    out.println(line);
                    synchronized (tail) {
                        tail.addLast(line);
                        if (tail.size() > TAIL_LINES) {
                            tail.removeFirst();
                        }
                    }
                    Matcher m = ready.matcher(line);
                    if (!listening.isDone() && m.find()) {
                        listening.complete(m.groupCount() > 0 ? m.group(1) : m.group());
                    }
                }
            } catch (IOException e) {
                listening.completeExceptionally(e);
            }
            listening.completeExceptionally(new IOException("exited with status " + waitFor(p)));
        });
        try {
            String uri = listening.get(settings.startTimeout().toMillis(), TimeUnit.MILLISECONDS);
            return new ServerProcess(p, uri, log);
        } catch (Exception e) {
            p.destroyForcibly();
            waitFor(p);
            joinQuietly(pump);
            String why = e instanceof TimeoutException ? "printed no line matching '" + ready + "' within " + settings.startTimeout().toSeconds() + " s"
                : e.getCause() != null ? e.getCause().getMessage() : e.toString();
            String lastLines;
            synchronized (tail) {
                lastLines = String.join("\n  ", tail);
            }
            // a JVM's command line without its launcher, options and class path: from the main class on
            int shownFrom = command.indexOf("-cp") >= 0 ? command.indexOf("-cp") + 2 : 0;
            throw new IOException("server " + name + " (" + String.join(" ", command.subList(shownFrom, command.size()))
                + ") failed to start: " + why + "; its last output (" + log + "):\n  " + lastLines);
        }
    }

    public String uri() {
        return uri;
    }

    /** The file with the server's stdout and stderr. */
    public Path log() {
        return log;
    }

    /** The server's process id. */
    public long pid() {
        return process.pid();
    }

    /** kill -9: SIGKILL, no shutdown hook runs; returns once the process is gone. */
    public void kill() {
        process.destroyForcibly();
        waitFor(process);
    }

    /** A clean stop (SIGTERM: the server's shutdown hook closes the store), SIGKILL after 10 s. */
    @Override
    public void close() {
        process.destroy();
        try {
            if (!process.waitFor(10, TimeUnit.SECONDS)) {
                process.destroyForcibly();
                process.waitFor(10, TimeUnit.SECONDS);
            }
        } catch (InterruptedException e) {
            process.destroyForcibly();
            Thread.currentThread().interrupt();
        }
    }

    /** The java launcher of the running JVM, so children run on the same JDK. */
    public static String javaExecutable() {
        return Path.of(System.getProperty("java.home"), "bin", "java").toString();
    }

    private static int waitFor(Process p) {
        try {
            return p.waitFor();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return -1;
        }
    }

    private static void joinQuietly(Thread t) {
        try {
            t.join(2000);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
