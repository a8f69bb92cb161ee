package io.erda.testsupport;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.PrintWriter;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * A child process started by a test or a benchmark: a JVM running a main class of this class path ({@link #java}),
 * or any executable ({@link #command}). Its stdout and stderr go to a log file; {@link Builder#start()} returns once
 * a line of that output matches the ready pattern (the server's "listening on URI"), and fails, naming the log and
 * quoting its last lines, if the child exits first or stays silent past the timeout.
 *
 * <p>Stopping: {@link #stop()} (also {@link #close()}) sends SIGTERM, so that a server's shutdown hook closes its
 * store, and SIGKILL if the child has not exited within 10 s; {@link #kill()} is SIGKILL at once, the crash the tests
 * inflict. Both return once the child is gone (at most 30 s after the SIGKILL). {@link #pause()} and {@link #resume()}
 * are SIGSTOP and SIGCONT.
 */
public final class ChildProcess implements AutoCloseable {
    private static final long GRACE_SECONDS = 10;
    private static final long GONE_SECONDS = 30;
    private static final int TAIL_LINES = 20;

    private final String name;
    private final List<String> command;
    private final Process process;
    private final Path log;
    private final Thread pump;
    private final Deque<String> tail;
    private final String ready;

    private ChildProcess(String name, List<String> command, Process process, Path log, Thread pump, Deque<String> tail,
                         String ready) {
        this.name = name;
        this.command = command;
        this.process = process;
        this.log = log;
        this.pump = pump;
        this.tail = tail;
        this.ready = ready;
    }

    /**
     * JVM options every JVM child gets before its own ({@link Builder#jvmOptions}), from the system property
     * {@value #EXTRA_JVM_OPTIONS_PROPERTY} (space-separated; none by default). scripts/test-softroce sets it in the
     * VM, where a JVM's start under TCG takes about a minute and a collector and compiler chosen for that halve it.
     */
    public static final String EXTRA_JVM_OPTIONS_PROPERTY = "erda.child.jvmOptions";

    private static final List<String> EXTRA_JVM_OPTIONS = List.of(
            System.getProperty(EXTRA_JVM_OPTIONS_PROPERTY, "").trim().split("\\s+")).stream()
            .filter(o -> !o.isEmpty()).toList();

    /** A JVM like this one (its java, its class path, native access enabled) running {@code mainClass}. */
    public static Builder java(String mainClass) {
        return new Builder(mainClass, List.of());
    }

    /** Any executable: {@code command} as given. */
    public static Builder command(List<String> command) {
        return new Builder(null, command);
    }

    /** The java launcher of the running JVM, so that children run on the same JDK. */
    public static String javaExecutable() {
        return Path.of(System.getProperty("java.home"), "bin", "java").toString();
    }

    /** The name given to the child (in its output thread's name and in failures). */
    public String name() {
        return name;
    }

    /** The full command line the child was started with. */
    public List<String> commandLine() {
        return command;
    }

    /**
     * What the ready line said: the ready pattern's first group, or the whole match if it has none; null if the child
     * was started with no ready pattern.
     */
    public String readyValue() {
        return ready;
    }

    /** The file with the child's stdout and stderr. */
    public Path log() {
        return log;
    }

    /** The log's content, or a note saying why it cannot be read. */
    public String logText() {
        return readLog(log);
    }

    /** The last (at most 20) lines of the child's output. */
    public List<String> tail() {
        synchronized (tail) {
            return List.copyOf(tail);
        }
    }

    public long pid() {
        return process.pid();
    }

    public boolean alive() {
        return process.isAlive();
    }

    /**
     * Waits for the child to exit on its own and its output to be in the log; returns its exit code, or throws
     * {@link IllegalStateException} naming the log if it is still running after {@code timeout}.
     */
    public int awaitExit(Duration timeout) throws InterruptedException {
        if (!process.waitFor(timeout.toMillis(), TimeUnit.MILLISECONDS)) {
            throw new IllegalStateException(name + " still running after " + timeout.toSeconds() + " s; log " + log
                    + ":\n" + readLog(log));
        }
        pump.join(2000);
        return process.exitValue();
    }

    /** kill -9 ({@link Process#destroyForcibly()} is SIGKILL on Linux): no shutdown hook runs. Waits until gone. */
    public void kill() {
        process.destroyForcibly();
        try {
            process.waitFor(GONE_SECONDS, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    /** SIGTERM, then {@link #kill()} if the child is still alive after 10 s (or the wait is interrupted). */
    public void stop() {
        if (!process.isAlive()) {
            return;
        }
        process.destroy();
        try {
            if (!process.waitFor(GRACE_SECONDS, TimeUnit.SECONDS)) {
                kill();
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            kill();
        }
    }

    /** {@link #stop()}. */
    @Override
    public void close() {
        stop();
    }

    /** SIGSTOP: the child stops where it is (a long GC pause, a stalled VM), holding its connections open. */
    public void pause() {
        signal("STOP");
    }

    /**
     * SIGCONT after {@link #pause()}; nothing if the child has ended meanwhile (it may have been exiting at the moment
     * it was stopped: a process that is exiting still takes the SIGSTOP and then ends).
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

    private void signal(String signal) {
        try {
            int exit = new ProcessBuilder("kill", "-" + signal, Long.toString(process.pid())).inheritIO().start().waitFor();
            if (exit != 0) {
                throw new IllegalStateException("kill -" + signal + " " + process.pid() + " (" + name + ") exited " + exit);
            }
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted signalling " + name, e);
        }
    }

    private static String readLog(Path log) {
        try {
            return Files.readString(log);
        } catch (IOException e) {
            return "(no log: " + e + ")";
        }
    }

    /** A child that exited, or printed no ready line in time; the child has been killed. */
    public static final class StartFailure extends IllegalStateException {
        private final String reason;
        private final Path log;
        private final List<String> tail;

        StartFailure(String name, String shownCommand, String reason, Path log, List<String> tail, Throwable cause) {
            super(name + " (" + shownCommand + ") failed to start: " + reason + "; its last output (" + log + "):\n  "
                    + String.join("\n  ", tail), cause);
            this.reason = reason;
            this.log = log;
            this.tail = tail;
        }

        /** Why: "exited with status N", "printed no line matching 'P' within N s", or an I/O error. */
        public String reason() {
            return reason;
        }

        public Path log() {
            return log;
        }

        /** The last (at most 20) lines of the child's output. */
        public List<String> tail() {
            return tail;
        }
    }

    /** How to start a child; {@link #log(Path)} is required. */
    public static final class Builder {
        private final String mainClass;
        private final List<String> executable;
        private final List<String> launcher = new ArrayList<>();
        private final List<String> jvmOptions = new ArrayList<>();
        private final List<String> args = new ArrayList<>();
        private final Map<String, String> env = new HashMap<>();
        private String name;
        private Path log;
        private boolean logCommand;
        private boolean appendLog;
        private Pattern ready;
        private Duration timeout = Duration.ofSeconds(60);

        private Builder(String mainClass, List<String> executable) {
            this.mainClass = mainClass;
            this.executable = List.copyOf(executable);
            this.name = mainClass != null ? mainClass.substring(mainClass.lastIndexOf('.') + 1) : executable.getFirst();
        }

        /** The name in failures and in the output thread's name (default: the main class's simple name). */
        public Builder name(String name) {
            this.name = name;
            return this;
        }

        /**
         * A command that execs the rest of its arguments in place (such as {@code ip netns exec NS}), so that the
         * process's pid stays the child's and signals reach it.
         */
        public Builder launcher(List<String> launcher) {
            this.launcher.addAll(launcher);
            return this;
        }

        /** JVM options before the class path (e.g. -Xmx512m, a collector, -Xlog); a JVM child only. */
        public Builder jvmOptions(List<String> options) {
            if (mainClass == null) {
                throw new IllegalStateException("JVM options for a command that is not a JVM: " + executable);
            }
            jvmOptions.addAll(options);
            return this;
        }

        /** The main class's (or the command's) arguments. */
        public Builder args(List<String> args) {
            this.args.addAll(args);
            return this;
        }

        public Builder args(String... args) {
            return args(List.of(args));
        }

        /** Extra environment variables for the child. */
        public Builder env(Map<String, String> env) {
            this.env.putAll(env);
            return this;
        }

        /** The file that gets the child's output (replaced unless {@link #appendLog}; its directory is created). */
        public Builder log(Path log) {
            this.log = log;
            return this;
        }

        /** Whether the child's output is added to the end of an existing log (by default the log is replaced). */
        public Builder appendLog(boolean appendLog) {
            this.appendLog = appendLog;
            return this;
        }

        /** Whether the log starts with the command line from the main class on (the class path is not repeated). */
        public Builder logCommand(boolean logCommand) {
            this.logCommand = logCommand;
            return this;
        }

        /**
         * A line matching {@code ready} (found anywhere in the line) says the child is ready; {@link #start()} waits
         * for it. Without one, {@code start()} returns at once.
         */
        public Builder ready(Pattern ready) {
            this.ready = ready;
            return this;
        }

        /** How long {@link #start()} waits for the ready line (default 60 s). */
        public Builder timeout(Duration timeout) {
            this.timeout = timeout;
            return this;
        }

        /**
         * Starts the child and waits for its ready line; throws {@link StartFailure} (the child killed) if it exits
         * first or prints none within the timeout.
         */
        public ChildProcess start() {
            if (log == null) {
                throw new IllegalStateException("no log file for " + name);
            }
            List<String> command = new ArrayList<>(launcher);
            int shownFrom;
            if (mainClass != null) {
                command.add(javaExecutable());
                command.add("--enable-native-access=ALL-UNNAMED");
                command.addAll(EXTRA_JVM_OPTIONS);
                command.addAll(jvmOptions);
                command.addAll(List.of("-cp", System.getProperty("java.class.path")));
                shownFrom = command.size();
                command.add(mainClass);
            } else {
                shownFrom = command.size();
                command.addAll(executable);
            }
            command.addAll(args);
            String shown = String.join(" ", command.subList(shownFrom, command.size()));
            Process p;
            try {
                Path dir = log.toAbsolutePath().getParent();
                if (dir != null) {
                    Files.createDirectories(dir);
                }
                String header = logCommand ? shown + "\n" : "";
                if (appendLog) {
                    Files.writeString(log, header, StandardOpenOption.CREATE, StandardOpenOption.APPEND);
                } else {
                    Files.writeString(log, header);
                }
                ProcessBuilder builder = new ProcessBuilder(command).redirectErrorStream(true);
                builder.environment().putAll(env);
                p = builder.start();
            } catch (IOException e) {
                throw new UncheckedIOException("cannot start " + name + " (" + shown + ")", e);
            }
            Deque<String> tail = new ArrayDeque<>();
            CompletableFuture<String> readyLine = new CompletableFuture<>();
            Pattern pattern = ready;
            Thread pump = Thread.ofPlatform().daemon().name(name + "-output").start(() -> pump(p, pattern, tail, readyLine));
            if (pattern == null) {
                return new ChildProcess(name, List.copyOf(command), p, log, pump, tail, null);
            }
            try {
                String value = readyLine.get(timeout.toMillis(), TimeUnit.MILLISECONDS);
                return new ChildProcess(name, List.copyOf(command), p, log, pump, tail, value);
            } catch (InterruptedException | ExecutionException | TimeoutException e) {
                p.destroyForcibly();
                try {
                    p.waitFor(GONE_SECONDS, TimeUnit.SECONDS);
                    pump.join(2000);
                } catch (InterruptedException ie) {
                    Thread.currentThread().interrupt();
                }
                if (e instanceof InterruptedException) {
                    Thread.currentThread().interrupt();
                }
                String reason = e instanceof TimeoutException
                        ? "printed no line matching '" + pattern + "' within " + timeout.toSeconds() + " s"
                        : e instanceof ExecutionException && e.getCause() != null ? e.getCause().getMessage() : e.toString();
                List<String> lastLines;
                synchronized (tail) {
                    lastLines = List.copyOf(tail);
                }
                throw new StartFailure(name, shown, reason, log, lastLines, e);
            }
        }

        /** Copies the child's output to its log and completes {@code readyLine} with the ready line's value. */
        private void pump(Process p, Pattern pattern, Deque<String> tail, CompletableFuture<String> readyLine) {
            try (BufferedReader in = new BufferedReader(new InputStreamReader(p.getInputStream(), StandardCharsets.UTF_8));
                 PrintWriter out = new PrintWriter(Files.newBufferedWriter(log, StandardCharsets.UTF_8,
                         StandardOpenOption.APPEND), true)) {
                for (String line; (line = in.readLine()) != null; ) {
                    out.println(line);
                    synchronized (tail) {
                        tail.addLast(line);
                        if (tail.size() > TAIL_LINES) {
                            tail.removeFirst();
                        }
                    }
                    if (pattern != null && !readyLine.isDone()) {
                        Matcher m = pattern.matcher(line);
                        if (m.find()) {
                            readyLine.complete(m.groupCount() > 0 ? m.group(1) : m.group());
                        }
                    }
                }
            } catch (IOException e) {
                readyLine.completeExceptionally(e);
            }
            try {
                readyLine.completeExceptionally(new IllegalStateException("exited with status " + p.waitFor()));
            } catch (InterruptedException e) {
                readyLine.completeExceptionally(e);
            }
        }
    }
}
