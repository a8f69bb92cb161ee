package io.erda.bench.store;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;

/**
 * What the machine itself does to a thread that asks for nothing but the CPU, measured beside a benchmark in the
 * same run (the idea of cyclictest): a thread sleeps {@link #PERIOD_NANOS} over and over and records how late each
 * wake-up is. It asks for SCHED_FIFO first ({@code sched_setscheduler}; root or CAP_SYS_NICE), so no thread of the
 * normal class can keep it waiting: what it still sees is the platform (the hypervisor not running the vCPU, a
 * kernel section that does not preempt) and timer slack. Without the privilege it runs in the normal class and says
 * so; its figures then include everyone's scheduling, the benchmark's threads too.
 *
 * <p>It runs in a small JVM of its own ({@link #main}: serial GC, a small heap, nothing allocated per wake-up), not
 * in the benchmark's: a Java thread stops at its JVM's safepoints, so in the benchmark's JVM it would report that
 * JVM's GC pauses as the platform's. Wake-ups later than the threshold are kept as {@link Pauses.Pause}s stamped
 * with System.nanoTime (CLOCK_MONOTONIC, the same in every process), so a slow operation can be checked against
 * them.
 */
final class HiccupProbe implements AutoCloseable {
    /** How often the probe wakes: cyclictest's default interval. A wake-up costs the machine some microseconds. */
    static final long PERIOD_NANOS = 1_000_000;
    /** Above every normal thread; below the kernel's own real-time threads (migration, watchdog: 99). */
    private static final int PRIORITY = 50;
    /** The probe process: set when its input says stop (or ends). */
    private static volatile boolean stop;

    private final Process process;
    private final BufferedReader out;
    private final String scheduling;
    private final List<Pauses.Pause> hiccups = new ArrayList<>();
    private Lateness lateness = new Lateness(0, Double.NaN, Double.NaN, Double.NaN);

    /** The wake-ups counted, and how late they were (µs). */
    record Lateness(long wakeUps, double p99Micros, double p999Micros, double maxMicros) { }

    /** Starts the probe process and waits until it runs; {@code hiccupNanos}: later wake-ups are kept as hiccups. */
    HiccupProbe(long hiccupNanos) throws IOException {
        process = new ProcessBuilder(io.erda.bench.backend.ServerProcess.javaExecutable(), "-Xms16m", "-Xmx16m",
                "-XX:+UseSerialGC", "--enable-native-access=ALL-UNNAMED", "-cp", System.getProperty("java.class.path"), HiccupProbe.class.getName(), Long.toString(hiccupNanos))
                .redirectError(ProcessBuilder.Redirect.INHERIT).start();
        out = new BufferedReader(new InputStreamReader(process.getInputStream(), StandardCharsets.UTF_8));
        String ready = out.readLine();
        if (ready == null || !ready.startsWith("ready ")) {
            process.destroyForcibly();
            throw new IOException("the hiccup probe did not start: " + ready);
        }
        scheduling = ready.substring("ready ".length());
    }

    /** The scheduling class the probe got: SCHED_FIFO, or the normal class and why. */
    String scheduling() {
        return scheduling;
    }

    /** The wake-ups later than the threshold, oldest first (after {@link #close}). */
    List<Pauses.Pause> hiccups() {
        return List.copyOf(hiccups);
    }

    /** The probe process. */
    long pid() {
        return process.pid();
    }

    /** What the wake-ups were like (after {@link #close}). */
    Lateness lateness() {
        return lateness;
    }

    /** Stops the probe and reads what it saw. */
    @Override
    public void close() throws IOException {
        try (var in = process.getOutputStream()) {
            in.write("stop\n".getBytes(StandardCharsets.UTF_8));
        }
        String line;
        while ((line = out.readLine()) != null) {
            String[] f = line.split(" ");
            switch (f[0]) {
                case "hiccup" -> hiccups.add(pause(Long.parseLong(f[1]), Long.parseLong(f[2])));
                case "lateness" -> lateness = new Lateness(Long.parseLong(f[1]), Long.parseLong(f[2]) / 1e3,
                        Long.parseLong(f[3]) / 1e3, Long.parseLong(f[4]) / 1e3);
                default -> throw new IOException("the hiccup probe said: " + line);
            }
        }
        try {
            if (!process.waitFor(10, TimeUnit.SECONDS)) {
                process.destroyForcibly();
                throw new IOException("the hiccup probe did not stop within 10 s");
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            process.destroyForcibly();
        }
    }

    private static Pauses.Pause pause(long dueNanos, long lateNanos) {
        return new Pauses.Pause(dueNanos, lateNanos, String.format(Locale.ROOT, "platform hiccup (probe %.1f ms late)",
                lateNanos / 1e6));
    }

    /**
     * The probe process: {@code HiccupProbe HICCUP_NANOS}. Prints {@code ready SCHEDULING}, wakes every {@link
     * #PERIOD_NANOS} until a line or end of input arrives, then prints {@code hiccup DUE_NANOS LATE_NANOS} per wake-up
     * later than HICCUP_NANOS and {@code lateness COUNT P99 P999 MAX} (ns) and exits.
     */
    public static void main(String[] args) throws Exception {
        long hiccupNanos = Long.parseLong(args[0]);
        PrintStream out = System.out;
        org.HdrHistogram.Histogram lateness = new org.HdrHistogram.Histogram(60_000_000_000L, 3);
        long[] due = new long[4096];
        long[] late = new long[4096];
        int kept = 0;
        Thread prober = Thread.currentThread();
        Thread.ofPlatform().daemon().start(() -> {
            try {
                new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8)).readLine();
            } catch (IOException e) {
                // the parent is gone: stop as on a line
            }
            stop = true;
            LockSupport.unpark(prober);
        });
        out.println("ready " + realtime());
        out.flush();
        long next = System.nanoTime() + PERIOD_NANOS;
        while (!stop) {
            long now;
            while ((now = System.nanoTime()) < next && !stop) {
                LockSupport.parkNanos(next - now);
            }
            if (stop) {
                break;
            }
            long l = now - next;
            lateness.recordValue(l);
            if (l > hiccupNanos && kept < due.length) {
                due[kept] = next;
                late[kept++] = l;
            }
            next = now + PERIOD_NANOS;
        }
        for (int i = 0; i < kept; i++) {
            out.println("hiccup " + due[i] + " " + late[i]);
        }
        out.println("lateness " + lateness.getTotalCount() + " " + lateness.getValueAtPercentile(99) + " "
                + lateness.getValueAtPercentile(99.9) + " " + lateness.getMaxValue());
        out.flush();
    }

    /** Puts the calling thread into SCHED_FIFO; returns what it runs in. */
    private static String realtime() {
        try {
            io.erda.ffm.libc.Scheduling.fifo(PRIORITY);
            return "SCHED_FIFO " + PRIORITY;
        } catch (java.io.UncheckedIOException e) { // refused: the message names the errno
            return "the normal class (" + e.getMessage() + ")";
        }
    }
}
