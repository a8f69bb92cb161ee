package io.erda.bench.store;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.lang.management.ManagementFactory;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import javax.management.JMException;
import javax.management.ObjectName;

/**
 * Pauses of a JVM on the {@link System#nanoTime()} clock, which on Linux is CLOCK_MONOTONIC and so the same in every
 * process of the host: a server process's pauses line up with the client's insert times to the nanosecond.
 *
 * <p>Read from a log a JVM writes ({@link #logOption} for a server process, {@link #logThisJvm} for this one):
 * every safepoint (each stop-the-world GC pause, and any other operation that stops the Java threads:
 * deoptimisation, code cache sweeps, thread dumps), logged when it ends with its total time including the time to
 * reach it; and every ZGC allocation stall (a thread waiting for memory, which is no safepoint).
 */
final class Pauses {
    /** A pause: it began at {@code startNanos} (System.nanoTime) and lasted {@code nanos}. */
    record Pause(long startNanos, long nanos, String what) {
        long endNanos() {
            return startNanos + nanos;
        }

        boolean overlaps(long fromNanos, long toNanos) {
            return startNanos <= toNanos && endNanos() >= fromNanos;
        }
    }

    /**
     * The -Xlog option that makes a server JVM log what {@link #read} reads to {@code file}: safepoints and GC at
     * info level, each line stamped with System.nanoTime ({@code timenanos}) and the wall clock.
     */
    static String logOption(Path file) {
        return "-Xlog:" + WHAT + ":file=" + file + ":" + DECORATORS;
    }

    private static final String WHAT = "safepoint=info,gc=info";
    private static final String DECORATORS = "timenanos,timemillis,tags";

    // [1795516552659ms][47013942687102ns][safepoint] Safepoint "G1CollectForAllocation", Time since last: ..., Total: 8317552 ns, ...
    private static final Pattern SAFEPOINT = Pattern.compile("\\[(\\d+)ns\\].*Safepoint \"([^\"]+)\".*Total: (\\d+) ns");
    // [..][47014945200769ns][gc] Allocation Stall (erda-worker-0) 1.234ms
    private static final Pattern ALLOCATION_STALL = Pattern.compile("\\[(\\d+)ns\\].*Allocation Stall \\(([^)]*)\\) ([0-9.]+)ms");

    /** The pauses a log written with {@link #logOption} records so far; none if it does not exist yet. */
    static List<Pause> read(Path log) {
        if (!Files.exists(log)) {
            return List.of();
        }
        List<Pause> found = new ArrayList<>();
        try (Stream<String> lines = Files.lines(log)) {
            lines.forEach(line -> parse(line, found));
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        return found;
    }

    /** Adds the pause a log line records, if it records one. */
    static void parse(String line, List<Pause> into) {
        Matcher m = SAFEPOINT.matcher(line);
        if (m.find()) {
            long end = Long.parseLong(m.group(1));
            long total = Long.parseLong(m.group(3));
            into.add(new Pause(end - total, total, "safepoint " + m.group(2)));
            return;
        }
        m = ALLOCATION_STALL.matcher(line);
        if (m.find()) {
            long end = Long.parseLong(m.group(1));
            long nanos = (long) (Double.parseDouble(m.group(3)) * 1e6);
            into.add(new Pause(end - nanos, nanos, "allocation stall of " + m.group(2)));
        }
    }

    /**
     * Makes this JVM write the log {@link #logOption} makes a JVM write, to {@code file}, from now on: the diagnostic
     * command {@code VM.log} (what {@code jcmd PID VM.log} runs), so a bench client records its own pauses as exactly
     * as it records the server's, and at no cost beside the measured work. The JMX GC notifications it replaces were
     * handled on the Notification Thread after every collection: 1 to 2 ms of CPU on one of the two vCPUs, beside the
     * insert that had just waited out the pause (perf sched of a 1 M-key load), and only of millisecond resolution.
     */
    static SelfLog logThisJvm(Path file) {
        try {
            Files.deleteIfExists(file);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        vmLog(file, "output=file=" + file, "what=" + WHAT, "decorators=" + DECORATORS);
        return new SelfLog(file);
    }

    /** This JVM's log of its pauses ({@link #logThisJvm}); closing it stops the logging. */
    record SelfLog(Path file) implements AutoCloseable {
        /** The pauses logged so far. */
        List<Pause> pauses() {
            return read(file);
        }

        @Override
        public void close() {
            vmLog(file, "output=file=" + file, "what=all=off");
        }
    }

    private static void vmLog(Path file, String... arguments) {
        try {
            ManagementFactory.getPlatformMBeanServer().invoke(new ObjectName("com.sun.management:type=DiagnosticCommand"),
                "vmLog", new Object[] {arguments}, new String[] {String[].class.getName()});
        } catch (JMException e) {
            throw new IllegalStateException("VM.log " + String.join(" ", arguments) + " failed for this JVM's log of its"
                + " pauses, " + file + ": " + e, e);
        }
    }

    /** The pauses of {@code all} that overlap {@code [fromNanos, toNanos]}. */
    static List<Pause> overlapping(List<Pause> all, long fromNanos, long toNanos) {
        return all.stream().filter(p -> p.overlaps(fromNanos, toNanos)).toList();
    }
}
