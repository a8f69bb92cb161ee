package io.erda.bench.cleaner;

import io.erda.bench.backend.ServerProcess;
import io.erda.bench.backend.ServerSettings;
import io.erda.client.ClientOptions;
import io.erda.client.ErdaClient;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.Callable;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.atomic.AtomicBoolean;
import org.HdrHistogram.Histogram;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/**
 * Log cleaning's cost to clients (paper §5.5, Fig. 26): for each workload, the read and write latency (mean,
 * percentiles and maximum, from HdrHistogram) of one client under normal operation and while the server cleans the
 * head (admin CLEAN, back to back), plus what each run did: live MB/s copied, time the head spent in two-sided mode,
 * bytes occupied before and after. One head, so every operation is on the head being cleaned. The server is a
 * process of its own on the chosen fabric.
 */
@Command(name = "cleaner-bench", mixinStandardHelpOptions = true,
        description = "Read/write latency normal vs during log cleaning (paper Fig. 26), cleaning MB/s, two-sided time, space.")
public final class CleanerBench implements Callable<Integer> {
    /** How often the load prints its progress. */
    private static final long PROGRESS_NANOS = 5_000_000_000L;

    @Option(names = "--fabric", defaultValue = "tcp", description = "tcp or shm. Default: ${DEFAULT-VALUE}.")
    String fabric;

    @Option(names = "--keys", defaultValue = "20000", description = "Keys loaded. Default: ${DEFAULT-VALUE}.")
    int keys;

    @Option(names = "--value-size", defaultValue = "1024", description = "Bytes per value (paper: 1024). Default: ${DEFAULT-VALUE}.")
    int valueSize;

    @Option(names = "--versions", defaultValue = "3", description = "Times every key is written before measuring (garbage for the cleaner). Default: ${DEFAULT-VALUE}.")
    int versions;

    @Option(names = "--seconds", defaultValue = "3", description = "Seconds per workload and mode. Default: ${DEFAULT-VALUE}.")
    int seconds;

    @Option(names = "--workloads", split = ",", defaultValue = "C,B,A,U",
            description = "C (100%% read), B (95/5), A (50/50), U (update-only). Default: ${DEFAULT-VALUE}.")
    List<String> workloads;

    @Option(names = "--pm-dir", defaultValue = "/dev/shm", description = "Where the store directory is created. Default: ${DEFAULT-VALUE}.")
    Path pmBase;

    public static void main(String[] args) {
        System.exit(new CommandLine(new CleanerBench()).execute(args));
    }

    @Override
    public Integer call() throws Exception {
        Path dir = Files.createTempDirectory(pmBase, "erda-cleaner-bench-");
        String listen = fabric.equals("shm") ? "shm://" + dir.resolveSibling(dir.getFileName() + "-fabric") : "tcp://127.0.0.1:0";
        List<String> args = List.of("--dir", dir.toString(), "--listen", listen, "--heads", "1", "--table-capacity",
                Integer.toString(Integer.highestOneBit(keys) * 4), "--region-size", Long.toString(16L << 20),
                "--segment-size", Long.toString(4L << 20), "--workers", "1", "--clean-threshold", "0"); // admin runs only
        ServerSettings settings = new ServerSettings(fabric, dir, 0, "wsp", true, Duration.ofSeconds(60), Path.of("target", "cleaner-bench"));
        try (ServerProcess server = ServerProcess.start("erda-server-cleaner-bench",
                io.erda.server.ErdaServerMain.defaultJvmOptions(), "io.erda.server.ErdaServerMain", args, settings);
             ErdaClient client = ErdaClient.connect(ClientOptions.of(java.net.URI.create(server.uri())).withPoolSize(1));
             ErdaClient admin = ErdaClient.connect(ClientOptions.of(java.net.URI.create(server.uri())).withPoolSize(1)
                     .withOperationTimeout(Duration.ofMinutes(10)))) {
            byte[] value = new byte[valueSize];
            long loadStart = System.nanoTime();
            long nextProgress = loadStart + PROGRESS_NANOS;
            for (int v = 0; v < versions; v++) {
                for (int k = 0; k < keys; k++) {
                    client.put(key(k), value);
                    if ((k & 1023) == 0 && System.nanoTime() - nextProgress > 0) {
                        nextProgress += PROGRESS_NANOS;
                        long done = (long) v * keys + k;
                        System.out.printf(Locale.ROOT, "load: %d of %d PUTs (version %d of %d), %.0f s%n", done,
                                (long) keys * versions, v + 1, versions, (System.nanoTime() - loadStart) / 1e9);
                    }
                }
            }
            System.out.printf(Locale.ROOT, "cleaner-bench: %s, 1 head, %d keys x %d B, %d versions each; %d s per workload and mode%n",
                    fabric, keys, valueSize, versions, seconds);
            System.out.printf(Locale.ROOT, "%-9s %-8s %10s %10s %10s %10s %10s %10s %10s %10s %10s %10s%n", "workload",
                    "mode", "read-mean", "read-p50", "read-p99", "read-p99.9", "read-max", "write-mean", "write-p50",
                    "write-p99", "write-p99.9", "write-max");
            List<Map<String, String>> runs = new ArrayList<>();
            for (String w : workloads) {
                double readFraction = switch (w) {
                    case "C" -> 1.0;
                    case "B" -> 0.95;
                    case "A" -> 0.5;
                    case "U" -> 0.0;
                    default -> throw new CommandLine.ParameterException(new CommandLine(this), "workload " + w + " is not C, B, A or U");
                };
                Histogram[] normal = measure(client, readFraction, null, null);
                print(w, "normal", normal);
                Histogram[] cleaning = measure(client, readFraction, admin, runs);
                print(w, "cleaning", cleaning);
            }
            System.out.printf(Locale.ROOT, "%ncleaning runs: %d%n", runs.size());
            System.out.printf(Locale.ROOT, "%12s %12s %12s %10s %10s %12s %10s%n", "before-MB", "after-MB", "copied-MB",
                    "copy-MB/s", "total-ms", "two-sided-ms", "objects");
            for (Map<String, String> r : runs) {
                System.out.printf(Locale.ROOT, "%12.2f %12.2f %12.2f %10s %10s %12s %10s%n", mb(r.get("occupied_bytes_before")),
                        mb(r.get("occupied_bytes_after")), mb(r.get("live_bytes_copied")), r.get("copy_mb_per_s"),
                        r.get("total_ms"), r.get("two_sided_ms"), r.get("objects_copied"));
            }
            System.out.println("client: " + client.stats());
        } finally {
            try (var files = Files.walk(dir)) {
                files.sorted(java.util.Comparator.reverseOrder()).forEach(f -> f.toFile().delete());
            }
        }
        return 0;
    }

    /**
     * Runs the workload for the configured seconds; with {@code admin}, only while a CLEAN is outstanding (cleans
     * back to back, their reports added to {@code runs}). Returns read and write latency histograms (ns).
     */
    private Histogram[] measure(ErdaClient client, double readFraction, ErdaClient admin, List<Map<String, String>> runs)
            throws InterruptedException {
        Histogram reads = new Histogram(3);
        Histogram writes = new Histogram(3);
        AtomicBoolean cleaning = new AtomicBoolean(admin == null);
        AtomicBoolean stop = new AtomicBoolean();
        long deadline = System.nanoTime() + Duration.ofSeconds(seconds).toNanos();
        Thread cleaner = admin == null ? null : Thread.ofPlatform().start(() -> {
            while (System.nanoTime() < deadline) {
                cleaning.set(true);
                Map<String, String> report = admin.clean(0);
                cleaning.set(false);
                synchronized (runs) {
                    runs.add(report);
                }
            }
            stop.set(true);
        });
        byte[] value = new byte[valueSize];
        ThreadLocalRandom random = ThreadLocalRandom.current();
        while (admin == null ? System.nanoTime() < deadline : !stop.get()) {
            byte[] k = key(random.nextInt(keys));
            boolean read = random.nextDouble() < readFraction;
            boolean during = cleaning.get();
            long start = System.nanoTime();
            if (read) {
                client.get(k);
            } else {
                client.put(k, value);
            }
            long took = System.nanoTime() - start;
            if (during && cleaning.get()) {
                (read ? reads : writes).recordValue(took);
            }
        }
        if (cleaner != null) {
            cleaner.join();
        }
        return new Histogram[] {reads, writes};
    }

    private static void print(String workload, String mode, Histogram[] h) {
        System.out.printf(Locale.ROOT, "%-9s %-8s %s %s%n", workload, mode, stats(h[0]), stats(h[1]));
    }

    private static String stats(Histogram h) {
        if (h.getTotalCount() == 0) {
            return String.format(Locale.ROOT, "%10s %10s %10s %10s %10s", "-", "-", "-", "-", "-");
        }
        return String.format(Locale.ROOT, "%8.1fus %8.1fus %8.1fus %8.1fus %8.1fus", h.getMean() / 1e3,
                h.getValueAtPercentile(50) / 1e3, h.getValueAtPercentile(99) / 1e3, h.getValueAtPercentile(99.9) / 1e3,
                h.getMaxValue() / 1e3);
    }

    private static double mb(String bytes) {
        return Long.parseLong(bytes) / 1e6;
    }

    private static byte[] key(int k) {
        return ("user" + k).getBytes(java.nio.charset.StandardCharsets.UTF_8);
    }
}
