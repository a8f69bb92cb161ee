package io.erda.bench.store;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;

/**
 * Pauses of a JVM on the {@link System#nanoTime()} clock, which on Linux is CLOCK_MONOTONIC and so the same in every
 * process of the host: a server process's pauses line up with the client's insert times to the nanosecond.
 *
 * <p>Read from a log of the server JVM ({@link #logOption}): every safepoint (each stop-the-world GC pause, and
 * any other operation that stops the Java threads: deoptimisation, code cache sweeps, thread dumps), logged when it
 * ends with its total time including the time to reach it; and every ZGC allocation stall (a thread waiting for
 * memory, which is no safepoint). Or, for a JVM's own collectors, from their notifications ({@link #listen()}).
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
        return "-Xlog:safepoint=info,gc=info:file=" + file + ":timenanos,timemillis,tags";
    }

    // [1795516552659ms][47013942687102ns][safepoint] Safepoint "G1CollectForAllocation", Time since last: ..., Total: 8317552 ns, ...
    private static final Pattern SAFEPOINT = Pattern.compile("\\[(\\d+)ns\\].*Safepoint \"([^\"]+)\".*Total: (\\d+) ns");
    // [..][47014945200769ns][gc] Allocation Stall (erda-worker-0) 1.234ms
    private static final Pattern ALLOCATION_STALL = Pattern.compile("\\[(\\d+)ns\\].*Allocation Stall \\(([^)]*)\\) ([0-9.]+)ms");

    private final List<Pause> pauses = Collections.synchronizedList(new ArrayList<>());

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

    /** GC pauses of this JVM from now on, from its collectors' notifications (millisecond resolution). */
    static Pauses listen() {
        Pauses p = new Pauses();
        long jvmStartMillis = java.lang.management.ManagementFactory.getRuntimeMXBean().getStartTime();
        long nanosMinusMillis = System.nanoTime() - System.currentTimeMillis() * 1_000_000;
        for (var gc : java.lang.management.ManagementFactory.getGarbageCollectorMXBeans()) {
            if (gc instanceof javax.management.NotificationEmitter emitter) {
                emitter.addNotificationListener((n, h) -> {
                    if (n.getType().equals(com.sun.management.GarbageCollectionNotificationInfo.GARBAGE_COLLECTION_NOTIFICATION)) {
                        var info = com.sun.management.GarbageCollectionNotificationInfo.from(
                            (javax.management.openmbean.CompositeData) n.getUserData());
                        // concurrent cycles (ZGC's "Cycles", G1's "Concurrent") are not pauses
                        if (!info.getGcCause().equals("No GC") && !info.getGcName().contains("Cycles")
                            && !info.getGcName().contains("Concurrent")) {
                            long startMillis = jvmStartMillis + info.getGcInfo().getStartTime();
                            p.pauses.add(new Pause(startMillis * 1_000_000 + nanosMinusMillis,
                                info.getGcInfo().getDuration() * 1_000_000, "GC " + info.getGcName()));
                        }
                    }
                }, null, null);
            }
        }
        return p;
    }

    /** What the listener has seen so far. */
    List<Pause> seen() {
        synchronized (pauses) {
            return List.copyOf(pauses);
        }
    }

    /** The pauses of {@code all} that overlap {@code [fromNanos, toNanos]}. */
    static List<Pause> overlapping(List<Pause> all, long fromNanos, long toNanos) {
        return all.stream().filter(p -> p.overlaps(fromNanos, toNanos)).toList();
    }
}
