package io.erda.bench.store;

import io.erda.bench.backend.ScratchDirectory;
import io.erda.client.ClientOptions;
import io.erda.client.ErdaClient;
import io.erda.server.HugePages;
import io.erda.server.RequestServer;
import io.erda.server.ServerConfig;
import java.net.URI;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.SplittableRandom;
import java.util.concurrent.Callable;
import org.HdrHistogram.Histogram;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/**
 * The store at scale (scripts/scale-bench): per key count and huge-page mode, a fresh store on shm (server in this
 * JVM, one client connection), a single-thread load of N keys (insert latency: p99, p99.99, max, and every insert
 * slower than {@code --stall-micros} with its time since the load began, to line up with JFR or the server's log),
 * then random GETs for {@code --get-seconds} after a warm-up (GET mean, p50, p99). Every key count and mode run in
 * turn in one process, {@code --rounds} times; the last lines are each mode's GET mean and insert max as medians
 * over the rounds, and their ratio to the first mode's.
 */
@Command(name = "scale-bench", mixinStandardHelpOptions = true, sortOptions = false,
    description = "Erda load and GET latency at scale, with and without huge pages for the PM files")
public final class ScaleBench implements Callable<Integer> {
    @Option(names = "--keys", split = ",", defaultValue = "10000,4000000", description = "key counts, each a fresh store (default: ${DEFAULT-VALUE})")
    List<Integer> keyCounts;

    @Option(names = "--huge-pages", split = ",", defaultValue = "off,thp", description = "server --huge-pages modes compared in one run (default: ${DEFAULT-VALUE})")
    List<String> modes;

    @Option(names = "--value-size", defaultValue = "1024", description = "value bytes (default: ${DEFAULT-VALUE})")
    int valueSize;

    @Option(names = "--get-seconds", defaultValue = "10", description = "measured GET seconds per store (default: ${DEFAULT-VALUE})")
    double getSeconds;

    @Option(names = "--rounds", defaultValue = "1", description = "repeat every key count and mode this often (default: ${DEFAULT-VALUE})")
    int rounds;

    @Option(names = "--warmup-keys", defaultValue = "200000", description = "keys of an unmeasured load and GETs into a store of"
        + " its own first, so the JIT has compiled the paths before anything is measured (default: ${DEFAULT-VALUE})")
    int warmupKeys;

    @Option(names = "--stall-micros", defaultValue = "1000", description = "list inserts slower than this (default: ${DEFAULT-VALUE})")
    long stallMicros;

    @Option(names = "--region-size", defaultValue = "0", converter = io.erda.server.ErdaServerMain.SizeConverter.class,
        description = "bytes of one log region, k/m/g (0: the server's default)")
    long regionSize;

    @Option(names = "--dir", description = "where the stores of --huge-pages off go (default /dev/shm, a tmpfs mounted"
        + " huge=never: 4 KiB pages)")
    Path dir;

    @Option(names = "--thp-dir", description = "where the stores of --huge-pages thp go (default: --dir): a tmpfs mounted"
        + " huge=within_size, e.g. mount -t tmpfs -o huge=within_size,size=8g erda-thp DIR")
    Path thpDir;

    record Result(int keys, String mode, double loadOpsPerSecond, double insertP99Us, double insertP9999Us,
                  double insertMaxUs, int stalls, double getMeanUs, double getP50Us, double getP99Us) { }

    public static void main(String[] args) {
        System.exit(new CommandLine(new ScaleBench()).execute(args));
    }

    /** GC pauses of this JVM, listened to for its whole life. */
    private final GcPauses pauses = GcPauses.listen();

    @Override
    public Integer call() throws Exception {
        modes.forEach(HugePages::fromOption); // a bad mode fails before any store is made
        Path base = dir != null ? dir : Path.of("/dev/shm");
        List<Result> results = new ArrayList<>();
        if (warmupKeys > 0) {
            Path work = Files.createTempDirectory(base, "scale-bench-warmup-");
            try {
                Result r = run(warmupKeys, modes.getFirst(), work, Math.min(2.0, getSeconds), false);
                System.out.printf(Locale.ROOT, "warm-up (not measured): %,d keys, huge pages %s: load %.0f ops/s, insert max %.1f µs%n",
                    warmupKeys, modes.getFirst(), r.loadOpsPerSecond(), r.insertMaxUs());
            } finally {
                ScratchDirectory.delete(work);
            }
        }
        for (int round = 1; round <= rounds; round++) {
            for (int keys : keyCounts) {
                for (String mode : modes) {
                    Path work = Files.createTempDirectory(mode.equals("thp") && thpDir != null ? thpDir : base, "scale-bench-");
                    try {
                        Result r = run(keys, mode, work, getSeconds, true);
                        System.out.printf(Locale.ROOT, "round %d: %,d keys, huge pages %s: load %.0f ops/s, insert p99 %.1f µs,"
                                + " p99.99 %.1f µs, max %.1f µs, %d inserts > %d µs; GET mean %.3f µs, p50 %.3f µs, p99 %.3f µs%n",
                            round, keys, mode, r.loadOpsPerSecond(), r.insertP99Us(), r.insertP9999Us(), r.insertMaxUs(),
                            r.stalls(), stallMicros, r.getMeanUs(), r.getP50Us(), r.getP99Us());
                        results.add(r);
                    } finally {
                        ScratchDirectory.delete(work);
                    }
                }
            }
        }
        System.out.println();
        System.out.println("medians over " + rounds + " round(s); ratios to huge pages " + modes.getFirst() + " of the same key count");
        for (int keys : keyCounts) {
            double firstGet = median(results, keys, modes.getFirst(), true);
            for (String mode : modes) {
                double get = median(results, keys, mode, true);
                double max = median(results, keys, mode, false);
                System.out.printf(Locale.ROOT, "%,d keys, huge pages %s: GET mean %.3f µs (x%.2f), insert max %.1f µs%n",
                    keys, mode, get, get / firstGet, max);
            }
        }
        return 0;
    }

    private static double median(List<Result> results, int keys, String mode, boolean get) {
        double[] v = results.stream().filter(r -> r.keys() == keys && r.mode().equals(mode))
            .mapToDouble(r -> get ? r.getMeanUs() : r.insertMaxUs()).sorted().toArray();
        return v.length % 2 == 1 ? v[v.length / 2] : (v[v.length / 2 - 1] + v[v.length / 2]) / 2;
    }

    private Result run(int keys, String mode, Path work, double seconds, boolean report) {
        long capacity = Long.highestOneBit(Math.max(1024, keys) * 2L - 1) * 2; // load factor at most 1/2
        ServerConfig config = ServerConfig.defaults(work.resolve("store"), URI.create("shm://" + work.resolve("fabric")))
            .withHugePages(HugePages.fromOption(mode));
        config = config.withGeometry(ServerConfig.DEFAULT_HEADS, capacity,
            regionSize > 0 ? regionSize : io.erda.core.log.LogGeometry.DEFAULT_REGION_SIZE,
            io.erda.core.log.LogGeometry.DEFAULT_SEGMENT_SIZE);
        byte[] value = new byte[valueSize];
        new SplittableRandom(valueSize).nextBytes(value);
        try (RequestServer server = RequestServer.start(config);
             ErdaClient client = ErdaClient.connect(ClientOptions.of(server.uri()).withPoolSize(1))) {
            Histogram inserts = new Histogram(60_000_000_000L, 3);
            List<long[]> stalls = new ArrayList<>(); // {start ms since the epoch, duration ns, insert}
            long startMillis = System.currentTimeMillis();
            long start = System.nanoTime();
            for (int i = 0; i < keys; i++) {
                long wall = System.currentTimeMillis();
                long t0 = System.nanoTime();
                client.put(key(i), value);
                long t = System.nanoTime() - t0;
                inserts.recordValue(t);
                if (t > stallMicros * 1000) {
                    stalls.add(new long[] {wall, t, i});
                }
            }
            double loadSeconds = (System.nanoTime() - start) / 1e9;
            long endMillis = System.currentTimeMillis();
            // the validator settles the load first; GC notifications arrive late on a busy machine
            sleep(client.storeInfo().leaseNanos() / 1_000_000 + 200);
            if (report) {
                long withGc = stalls.stream().filter(st -> pauses.overlaps(st[0], st[1])).count();
                System.out.printf(Locale.ROOT, "  %d inserts > %d µs, %d of them during a GC pause of this JVM (%d pauses,"
                    + " longest %d ms); the longest inserts:%n", stalls.size(), stallMicros, withGc,
                    pauses.count(startMillis, endMillis), pauses.longestMillis(startMillis, endMillis));
                stalls.stream().sorted((a, b) -> Long.compare(b[1], a[1])).limit(10).forEach(st -> System.out.printf(Locale.ROOT,
                    "    %s insert %d took %.1f µs%s%n", java.time.Instant.ofEpochMilli(st[0]), st[2], st[1] / 1e3,
                    pauses.overlaps(st[0], st[1]) ? " (GC pause)" : ""));
            }
            SplittableRandom random = new SplittableRandom(42);
            timedGets(client, keys, random, Math.min(2.0, seconds), null); // warm-up: JIT, client mappings
            Histogram gets = new Histogram(60_000_000_000L, 3);
            double mean = timedGets(client, keys, random, seconds, gets);
            if (report) {
                System.out.println("  this process (client and server mappings): " + hugeMapped());
            }
            return new Result(keys, mode, keys / loadSeconds, inserts.getValueAtPercentile(99) / 1e3,
                inserts.getValueAtPercentile(99.99) / 1e3, inserts.getMaxValue() / 1e3, stalls.size(), mean / 1e3,
                gets.getValueAtPercentile(50) / 1e3, gets.getValueAtPercentile(99) / 1e3);
        }
    }

    /** GETs of random keys for {@code seconds}; returns the mean in ns (each GET timed, as YCSB does). */
    private static double timedGets(ErdaClient client, int keys, SplittableRandom random, double seconds, Histogram h) {
        long end = System.nanoTime() + (long) (seconds * 1e9);
        long total = 0;
        long count = 0;
        while (System.nanoTime() < end) {
            for (int n = 0; n < 1000; n++) {
                byte[] k = key(random.nextInt(keys));
                long t0 = System.nanoTime();
                byte[] v = client.get(k);
                long t = System.nanoTime() - t0;
                if (v == null) {
                    throw new IllegalStateException("key " + new String(k, java.nio.charset.StandardCharsets.US_ASCII) + " reads as not found");
                }
                total += t;
                count++;
                if (h != null) {
                    h.recordValue(t);
                }
            }
        }
        return total / (double) count;
    }

    /** ShmemPmdMapped of this process: memory of shared files mapped by huge pages. */
    private static String hugeMapped() {
        try {
            return Files.readAllLines(Path.of("/proc/self/smaps_rollup")).stream().filter(l -> l.startsWith("ShmemPmdMapped"))
                .map(l -> l.replaceAll("\\s+", " ")).findFirst().orElse("ShmemPmdMapped unknown");
        } catch (java.io.IOException e) {
            return "ShmemPmdMapped unknown: " + e.getMessage();
        }
    }

    /** GC pauses of this JVM while listening, from the collectors' notifications. */
    static final class GcPauses {
        private final List<long[]> pauses = java.util.Collections.synchronizedList(new ArrayList<>()); // {start ms, ms}

        static GcPauses listen() {
            GcPauses p = new GcPauses();
            long jvmStart = java.lang.management.ManagementFactory.getRuntimeMXBean().getStartTime();
            for (var gc : java.lang.management.ManagementFactory.getGarbageCollectorMXBeans()) {
                if (gc instanceof javax.management.NotificationEmitter emitter) {
                    javax.management.NotificationListener l = (n, h) -> {
                        if (n.getType().equals(com.sun.management.GarbageCollectionNotificationInfo.GARBAGE_COLLECTION_NOTIFICATION)) {
                            var info = com.sun.management.GarbageCollectionNotificationInfo.from(
                                (javax.management.openmbean.CompositeData) n.getUserData());
                            if (!info.getGcCause().equals("No GC") && !info.getGcName().contains("Cycles") && !info.getGcName().contains("Concurrent")) {
                                p.pauses.add(new long[] {jvmStart + info.getGcInfo().getStartTime(), info.getGcInfo().getDuration()});
                            }
                        }
                    };
                    emitter.addNotificationListener(l, null, null);
                }
            }
            return p;
        }

        /** Pauses that began in {@code [fromMillis, toMillis]}. */
        long count(long fromMillis, long toMillis) {
            synchronized (pauses) {
                return pauses.stream().filter(p -> p[0] >= fromMillis && p[0] <= toMillis).count();
            }
        }

        long longestMillis(long fromMillis, long toMillis) {
            synchronized (pauses) {
                return pauses.stream().filter(p -> p[0] >= fromMillis && p[0] <= toMillis).mapToLong(p -> p[1]).max().orElse(0);
            }
        }

        /** Whether a pause overlapped {@code [startMillis, startMillis + nanos]} (1 ms slack: millisecond clocks). */
        boolean overlaps(long startMillis, long nanos) {
            long end = startMillis + nanos / 1_000_000 + 1;
            synchronized (pauses) {
                return pauses.stream().anyMatch(p -> p[0] <= end && p[0] + p[1] >= startMillis - 1);
            }
        }
    }

    /** "user" and 12 digits: 16 bytes. */
    static byte[] key(int i) {
        byte[] k = new byte[16];
        k[0] = 'u';
        k[1] = 's';
        k[2] = 'e';
        k[3] = 'r';
        Arrays.fill(k, 4, 16, (byte) '0');
        for (int p = 15, v = i; v > 0; p--, v /= 10) {
            k[p] = (byte) ('0' + v % 10);
        }
        return k;
    }

    private static void sleep(long millis) {
        try {
            Thread.sleep(millis);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
