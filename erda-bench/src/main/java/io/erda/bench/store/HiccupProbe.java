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

    /** The scheduling class the probe got (SCHED_FIFO, or the normal class and why) and its threads' CPUs. */
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
                case "hiccup" -> hiccups.add(pause(Integer.parseInt(f[1]), Long.parseLong(f[2]), Long.parseLong(f[3])));
                case "lateness" -> lateness = new Lateness(Long.parseLong(f[1]), Long.parseLong(f[2]) / 1e3,
                        Long.parseLong(f[3]) / 1e3, Long.parseLong(f[4]) / 1e3);
                default -> throw new IOException("the hiccup probe said: " + line);
            }
        }
        hiccups.sort(java.util.Comparator.comparingLong(Pauses.Pause::startNanos)); // the threads' interleaved
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

    private static Pauses.Pause pause(int cpu, long dueNanos, long lateNanos) {
        return new Pauses.Pause(dueNanos, lateNanos, String.format(Locale.ROOT, "platform hiccup (probe%s %.1f ms late)",
                cpu < 0 ? "" : " on cpu " + cpu, lateNanos / 1e6));
    }

    /**
     * The probe process: {@code HiccupProbe HICCUP_NANOS}. One probing thread per CPU it may use, each pinned to its
     * CPU: the host stalls vCPUs one at a time, and a single thread sees only the vCPU it is on (a load whose probe
     * saw nothing had an insert of 26 ms beside probe stalls of 30 ms a moment before). Prints {@code ready
     * SCHEDULING}, wakes every {@link #PERIOD_NANOS} on every thread until a line or end of input arrives, then prints
     * {@code hiccup CPU DUE_NANOS LATE_NANOS} per wake-up later than HICCUP_NANOS (CPU -1: not pinned) and {@code
     * lateness COUNT P99 P999 MAX} (ns, all threads) and exits.
     */
    public static void main(String[] args) throws Exception {
        long hiccupNanos = Long.parseLong(args[0]);
        PrintStream out = System.out;
        int[] cpus;
        String pinning;
        try {
            cpus = io.erda.ffm.libc.Scheduling.allowedCpus();
            pinning = "one thread pinned to each of cpus " + java.util.Arrays.toString(cpus);
        } catch (java.io.UncheckedIOException e) {
            cpus = new int[] {-1};
            pinning = "one thread, not pinned (" + e.getMessage() + ")";
        }
        List<Thread> probers = new ArrayList<>();
        List<Prober> results = new ArrayList<>();
        java.util.concurrent.CountDownLatch started = new java.util.concurrent.CountDownLatch(cpus.length);
        for (int cpu : cpus) {
            Prober prober = new Prober(cpu, hiccupNanos, started);
            results.add(prober);
            probers.add(Thread.ofPlatform().name("probe-cpu" + cpu).start(prober));
        }
        started.await();
        Thread.ofPlatform().daemon().start(() -> {
            try {
                new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8)).readLine();
            } catch (IOException e) {
                // the parent is gone: stop as on a line
            }
            stop = true;
            probers.forEach(LockSupport::unpark);
        });
        String scheduling = results.stream().map(r -> r.scheduling).distinct().reduce((a, b) -> a + "; " + b)
                .orElseThrow();
        String refused = results.stream().map(r -> r.pinRefused).filter(java.util.Objects::nonNull).findFirst()
                .map(e -> ", pinning refused: " + e).orElse("");
        out.println("ready " + scheduling + ", " + pinning + refused);
        out.flush();
        org.HdrHistogram.Histogram lateness = new org.HdrHistogram.Histogram(60_000_000_000L, 3);
        for (int i = 0; i < probers.size(); i++) {
            probers.get(i).join();
            Prober r = results.get(i);
            lateness.add(r.lateness);
            for (int k = 0; k < r.kept; k++) {
                out.println("hiccup " + r.cpu + " " + r.due[k] + " " + r.late[k]);
            }
        }
        out.println("lateness " + lateness.getTotalCount() + " " + lateness.getValueAtPercentile(99) + " "
                + lateness.getValueAtPercentile(99.9) + " " + lateness.getMaxValue());
        out.flush();
    }

    /** One probing thread of the probe process: pinned to {@code cpu} (unless -1), in SCHED_FIFO if permitted. */
    private static final class Prober implements Runnable {
        final int cpu;
        final long hiccupNanos;
        final java.util.concurrent.CountDownLatch started;
        final org.HdrHistogram.Histogram lateness = new org.HdrHistogram.Histogram(60_000_000_000L, 3);
        final long[] due = new long[4096];
        final long[] late = new long[4096];
        int kept;
        volatile String scheduling;
        volatile String pinRefused;

        Prober(int cpu, long hiccupNanos, java.util.concurrent.CountDownLatch started) {
            this.cpu = cpu;
            this.hiccupNanos = hiccupNanos;
            this.started = started;
        }

        @Override
        public void run() {
            try {
                if (cpu >= 0) {
                    try {
                        io.erda.ffm.libc.Scheduling.pin(cpu);
                    } catch (java.io.UncheckedIOException e) {
                        pinRefused = e.getMessage();
                    }
                }
                scheduling = realtime();
            } catch (RuntimeException e) { // whatever else: the probe still starts and says so
                scheduling = "unknown scheduling (" + e + ")";
            } finally {
                started.countDown(); // main waits for every thread: never for one that failed to set up
            }
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
        }
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
