package io.erda.bench.store;

import com.sun.management.ThreadMXBean;
import io.erda.bench.backend.ScratchDirectory;
import io.erda.bench.backend.ServerProcess;
import io.erda.bench.backend.ServerSettings;
import io.erda.client.ClientOptions;
import io.erda.client.ErdaClient;
import io.erda.server.RequestServer;
import io.erda.server.ServerConfig;
import io.erda.server.platform.HugePages;
import java.io.IOException;
import java.lang.management.ManagementFactory;
import java.net.URI;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.SplittableRandom;
import java.util.concurrent.Callable;
import org.HdrHistogram.Histogram;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine;

/**
 * The store at scale (scripts/scale-bench): per key count and huge-page mode, a fresh store on shm served by an
 * {@code erda-server} process of its own ({@code --server process}, the default: the client's allocation cannot pause
 * the server, nor the server's the client) or by a server in this JVM ({@code --server embedded}). One client
 * connection first inserts {@code --warmup-keys} keys of its own, unmeasured, and waits for the server to settle
 * their leases (the JIT compiles both sides' paths, the lease validator's too), then loads N keys single-threaded, each insert timed into an HdrHistogram (p99, p99.9, p99.99, max); the slowest
 * are listed with their time since the load began and the pauses that overlapped them: the server JVM's safepoints
 * and allocation stalls, read from its {@code -Xlog} (stamped with System.nanoTime, the same clock as the client's),
 * and this JVM's safepoints, which it logs itself the same way ({@code VM.log}). Then random GETs for
 * {@code --get-seconds} after a warm-up (GET mean, p50, p99), and what the memory a GET reads costs here without Erda
 * ({@link MemoryFloor}: random table windows and objects of the same store, read by plain copies). Every
 * key count and mode run in turn, {@code --rounds} times; the last lines are each mode's GET mean and insert max as
 * medians over the rounds. Each run prints the machine's load average (other processes' CPU shows as stalls), and
 * during each load a {@link HiccupProbe} at real-time priority records what the platform itself stalls (a vCPU the
 * hypervisor does not run, a kernel that does not preempt), so an insert stall can be told apart from one no
 * process on this machine could have avoided ({@code --no-hiccup-probe}: off).
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

    @Option(names = "--warmup-keys", defaultValue = "200000", description = "keys of an unmeasured load into each store"
        + " before the measured one (other keys than the measured ones), so the JIT has compiled the paths of client and"
        + " server (default: ${DEFAULT-VALUE})")
    int warmupKeys;

    @Option(names = "--warmup-seconds", defaultValue = "6", description = "after inserting the warm-up keys, keep"
        + " updating them until this many seconds of warm-up have passed, so the load starts with the server's"
        + " steady-state paths compiled (the lease validator settling while PUTs arrive, every quarter lease) without"
        + " more keys in the store (default: ${DEFAULT-VALUE})")
    double warmupSeconds;

    @Option(names = "--stall-micros", defaultValue = "1000", description = "count inserts slower than this (default: ${DEFAULT-VALUE})")
    long stallMicros;

    @Option(names = "--slowest", defaultValue = "10", description = "list this many of the slowest inserts (default: ${DEFAULT-VALUE})")
    int slowest;

    @Option(names = "--region-size", defaultValue = "0", converter = io.erda.server.ErdaServerMain.SizeConverter.class,
        description = "bytes of one log region, k/m/g (0: the server's default)")
    long regionSize;

    @Option(names = "--server", defaultValue = "process", description = "process: an erda-server JVM of its own;"
        + " embedded: a server in this JVM (default: ${DEFAULT-VALUE})")
    String serverMode;

    @Option(names = "--server-jvm-options", description = "options of the server JVM (--server process), separated by"
        + " spaces, e.g. '-XX:+UseG1GC -Xmx4g'; -Xlog for its pauses is always added (default: the launcher's, as"
        + " scripts/erda-server gives them: erda-server's server-jvm-options)")
    String serverJvmOptions;

    @Option(names = "--server-jfr", description = "record the server JVM with JFR into --out (settings=profile, and every"
        + " park, monitor enter and wait of 1 ms or more with its stack, every JIT compilation of 5 ms or more)")
    boolean serverJfr;

    @Option(names = "--out", defaultValue = "target/scale-bench", description = "where the server processes' output,"
        + " pause logs and recordings go (default: ${DEFAULT-VALUE})")
    Path out;

    @Option(names = "--dir", description = "where the stores of --huge-pages off go (default /dev/shm, a tmpfs mounted"
        + " huge=never: 4 KiB pages)")
    Path dir;

    @Option(names = "--thp-dir", description = "where the stores of --huge-pages thp go (default: --dir): a tmpfs mounted"
        + " huge=within_size, e.g. mount -t tmpfs -o huge=within_size,size=16g erda-thp DIR (4 M keys need more than 8g)")
    Path thpDir;

    @Option(names = "--hiccup-probe", negatable = true, defaultValue = "true", fallbackValue = "true",
        description = "during each load, a thread per CPU at real-time priority (SCHED_FIFO, if permitted) that wakes"
        + " every millisecond and records how late: what the platform itself stalls, beside the inserts (default: on;"
        + " --no-hiccup-probe: off)")
    boolean hiccupProbe;

    record Result(int keys, String mode, double loadOpsPerSecond, double insertP99Us, double insertP999Us,
                  double insertP9999Us, double insertMaxUs, int stalls, double getMeanUs, double getP50Us, double getP99Us,
                  double probeMaxUs, double insertMaxWithoutPlatformUs, double insertMaxWithoutPlatformOrPausesUs,
                  double floorUs) { }

    /** A server the bench talks to, and where its pauses come from. */
    private interface BenchServer extends AutoCloseable {
        URI uri();

        /** The server JVM's pauses so far. */
        List<Pauses.Pause> pauses();

        /** How the server runs, for the report. */
        String describe();

        @Override
        void close();
    }

    public static void main(String[] args) {
        System.exit(new CommandLine(new ScaleBench()).execute(args));
    }

    /** This JVM's pauses (the client's, and the server's too with --server embedded), logged while it runs. */
    private Pauses.SelfLog clientPauses;

    @Override
    public Integer call() throws Exception {
        modes.forEach(HugePages::fromOption); // a bad mode fails before any store is made
        if (!serverMode.equals("process") && !serverMode.equals("embedded")) {
            throw new CommandLine.ParameterException(new CommandLine(this), "--server " + serverMode + " is neither process nor embedded");
        }
        if (!(warmupSeconds >= 0 && warmupSeconds <= 3600)) {
            throw new CommandLine.ParameterException(new CommandLine(this), "--warmup-seconds " + warmupSeconds
                + " is not between 0 and 3600");
        }
        Path base = dir != null ? dir : Path.of("/dev/shm");
        Files.createDirectories(out);
        try (Pauses.SelfLog log = Pauses.logThisJvm(out.toAbsolutePath().resolve("client-pauses.log"))) {
            clientPauses = log;
            return runAll(base);
        }
    }

    private int runAll(Path base) throws IOException {
        List<Result> results = new ArrayList<>();
        int run = 0;
        for (int round = 1; round <= rounds; round++) {
            for (int keys : keyCounts) {
                for (String mode : modes) {
                    Path work = Files.createTempDirectory(mode.equals("thp") && thpDir != null ? thpDir : base, "scale-bench-");
                    try {
                        Result r = run(keys, mode, work, "run" + ++run + "-" + keys + "-" + mode);
                        System.out.printf(Locale.ROOT, "round %d: %,d keys, huge pages %s: load %.0f ops/s, insert p99 %.1f µs,"
                                + " p99.9 %.1f µs, p99.99 %.1f µs, max %.1f µs, %d inserts > %d µs; GET mean %.3f µs, p50 %.3f µs,"
                                + " p99 %.3f µs%n", round, keys, mode, r.loadOpsPerSecond(), r.insertP99Us(), r.insertP999Us(),
                            r.insertP9999Us(), r.insertMaxUs(), r.stalls(), stallMicros, r.getMeanUs(), r.getP50Us(), r.getP99Us());
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
            double firstGet = median(results, keys, modes.getFirst(), Result::getMeanUs);
            for (String mode : modes) {
                double get = median(results, keys, mode, Result::getMeanUs);
                double max = median(results, keys, mode, Result::insertMaxUs);
                double probe = results.stream().filter(r -> r.keys() == keys && r.mode().equals(mode))
                    .mapToDouble(Result::probeMaxUs).max().orElse(Double.NaN);
                System.out.printf(Locale.ROOT, "%,d keys, huge pages %s: GET mean %.3f µs (x%.2f; its memory without"
                        + " Erda %.3f µs), insert max %.1f µs%s%n",
                    keys, mode, get, get / firstGet, median(results, keys, mode, Result::floorUs), max,
                    Double.isNaN(probe) ? "" : String.format(Locale.ROOT,
                        " (the hiccup probe's latest wake-up in these loads: %.1f µs); without the platform's stalls"
                            + " %.1f µs, without them or a JVM pause %.1f µs", probe,
                        median(results, keys, mode, Result::insertMaxWithoutPlatformUs),
                        median(results, keys, mode, Result::insertMaxWithoutPlatformOrPausesUs)));
            }
        }
        return 0;
    }

    private static double median(List<Result> results, int keys, String mode,
                                 java.util.function.ToDoubleFunction<Result> figure) {
        double[] v = results.stream().filter(r -> r.keys() == keys && r.mode().equals(mode))
            .mapToDouble(figure).sorted().toArray();
        return v.length % 2 == 1 ? v[v.length / 2] : (v[v.length / 2 - 1] + v[v.length / 2]) / 2;
    }

    private Result run(int keys, String mode, Path work, String name) throws IOException {
        long capacity = Long.highestOneBit(Math.max(1024, keys + warmupKeys) * 2L - 1) * 2; // load factor at most 1/2
        byte[] value = new byte[valueSize];
        new SplittableRandom(valueSize).nextBytes(value);
        try (BenchServer server = startServer(mode, work, capacity, name);
             ErdaClient client = ErdaClient.connect(ClientOptions.of(server.uri()).withPoolSize(1))) {
            System.out.printf(Locale.ROOT, "%s: %,d keys, huge pages %s, server %s; load average before: %s%n", name, keys,
                mode, server.describe(), loadAverage());
            long warmupStart = System.nanoTime();
            for (int i = 0; i < warmupKeys; i++) {
                client.put(key(WARM_UP, i), value);
            }
            // With only the inserts (2 s) the load began while the validator's code was still being compiled: JFR of
            // a 1 M-key load showed its HashMap paths deoptimised in its first seconds, a 52 ms C2 compilation of
            // Leases.settleExpired on one of the two vCPUs, and the worker parked up to 2.3 ms on the store lock
            // while the validator (then all of it at nice 10, so slow on a contended vCPU) held it.
            long warmupEnd = warmupStart + (long) (warmupSeconds * 1e9);
            for (int i = 0; warmupKeys > 0 && System.nanoTime() - warmupEnd < 0; i = (i + 1) % warmupKeys) {
                client.put(key(WARM_UP, i), value);
            }
            if (warmupKeys > 0) {
                timedGets(client, WARM_UP, warmupKeys, new SplittableRandom(7), 1.0, null);
                // and the lease validator settles the warm-up's PUTs once (its code compiled, not cold in the load)
                sleep(client.storeInfo().leaseNanos() / 1_000_000 + 500);
            }
            // What this JVM made so far and keeps (classes' strings and tables, connections, the warm-up's state: 5 to
            // 6 MB) is still young: G1 would copy it between survivor spaces in each of the load's first 15 young
            // pauses, 5 to 10 ms each on two vCPUs (Object Copy, 4.8 MB copied per pause), and ~1 ms once tenured. A
            // full collection now tenures it, so the load's young pauses collect the load's own garbage only.
            System.gc();
            Histogram inserts = new Histogram(60_000_000_000L, 3);
            List<long[]> stalls = new ArrayList<>(); // {start nanoTime, duration ns, insert}
            long nanosMinusWallNanos = System.nanoTime() - wallMicros() * 1000;
            HiccupProbe probe = hiccupProbe ? new HiccupProbe(stallMicros * 1000) : null;
            long fastMax = 0; // the slowest insert not in stalls
            long allocatedBefore = ALLOCATION.getTotalThreadAllocatedBytes();
            long start = System.nanoTime();
            try {
                for (int i = 0; i < keys; i++) {
                    long t0 = System.nanoTime();
                    client.put(key(USER, i), value);
                    long t = System.nanoTime() - t0;
                    inserts.recordValue(t);
                    if (t > stallMicros * 1000) {
                        stalls.add(new long[] {t0, t, i});
                    } else if (t > fastMax) {
                        fastMax = t;
                    }
                }
            } finally {
                if (probe != null) {
                    probe.close();
                }
            }
            long end = System.nanoTime();
            long allocatedAfter = ALLOCATION.getTotalThreadAllocatedBytes();
            long allocated = allocatedBefore < 0 || allocatedAfter < 0 ? -1 : allocatedAfter - allocatedBefore;
            double loadSeconds = (end - start) / 1e9;
            String loadAfter = loadAverage();
            // the validator settles the load first; log lines arrive a little late
            sleep(client.storeInfo().leaseNanos() / 1_000_000 + 200);
            List<Pauses.Pause> hiccups = probe == null ? List.of() : probe.hiccups();
            StallCauses causes = reportStalls(stalls, fastMax, start, end, server.pauses(), hiccups,
                nanosMinusWallNanos, loadAfter);
            reportClientJvm(allocated, keys, start, end);
            double probeMaxUs = probe == null ? Double.NaN : reportProbe(probe);
            SplittableRandom random = new SplittableRandom(42);
            timedGets(client, USER, keys, random, Math.min(2.0, getSeconds), null); // warm-up: JIT, client mappings
            Histogram gets = new Histogram(60_000_000_000L, 3);
            double mean = timedGets(client, USER, keys, random, getSeconds, gets);
            System.out.println("  this process (client" + (serverMode.equals("embedded") ? " and server" : "") + " mappings): "
                + hugeMapped());
            int objectBytes = (int) io.erda.protocol.memory.ObjectLayout.length(key(USER, 0).length, valueSize);
            MemoryFloor.Result floor = MemoryFloor.measure(work.resolve("store"), keys, i -> key(USER, i), objectBytes,
                FLOOR_SECONDS);
            if (floor.missing() > 0) {
                throw new IllegalStateException(floor.missing() + " of " + floor.lookups() + " keys not in the table files");
            }
            System.out.printf(Locale.ROOT, "  the memory a GET reads, without Erda (a random key's table window, then %d"
                    + " bytes of its object, copied from this store's files mapped here, %,d lookups): %.0f ns of the GET"
                    + " mean's %.0f ns%n", objectBytes, floor.lookups(), floor.lookupNanos(), mean);
            return new Result(keys, mode, keys / loadSeconds, inserts.getValueAtPercentile(99) / 1e3,
                inserts.getValueAtPercentile(99.9) / 1e3, inserts.getValueAtPercentile(99.99) / 1e3,
                inserts.getMaxValue() / 1e3, stalls.size(), mean / 1e3, gets.getValueAtPercentile(50) / 1e3,
                gets.getValueAtPercentile(99) / 1e3, probeMaxUs, causes.maxWithoutPlatformNanos() / 1e3,
                causes.maxWithoutPlatformOrPausesNanos() / 1e3, floor.lookupNanos() / 1e3);
        }
    }

    /** Seconds {@link MemoryFloor} measures a store after its GETs. */
    private static final double FLOOR_SECONDS = 2;

    /**
     * What this JVM (the client, and in --server embedded the server too) allocated per insert during the load, on
     * every thread ({@code allocated} -1 where the JVM does not measure it), and its pauses then: a young pause comes
     * once per young generation's worth of allocation.
     */
    private void reportClientJvm(long allocated, int keys, long start, long end) {
        List<Pauses.Pause> during = Pauses.overlapping(clientPauses.pauses(), start, end);
        System.out.printf(Locale.ROOT, "  this JVM during the load: %,d bytes allocated per insert (all threads), %d"
                + " pauses, longest %.1f ms, %.1f ms in all%n", allocated < 0 ? -1 : allocated / Math.max(1, keys),
            during.size(), during.stream().mapToLong(Pauses.Pause::nanos).max().orElse(0) / 1e6,
            during.stream().mapToLong(Pauses.Pause::nanos).sum() / 1e6);
    }

    /** Allocation of this JVM's threads ({@code getTotalThreadAllocatedBytes} is -1 where the JVM does not measure it). */
    private static final ThreadMXBean ALLOCATION = (ThreadMXBean) ManagementFactory.getThreadMXBean();

    /** The hiccup probe's line; returns its latest wake-up in µs. */
    private double reportProbe(HiccupProbe probe) {
        HiccupProbe.Lateness late = probe.lateness();
        System.out.printf(Locale.ROOT, "  the platform during the load (hiccup probe, a process of its own, in %s, waking"
                + " every %d µs): %,d wake-ups, late p99 %.1f µs, p99.9 %.1f µs, max %.1f µs, %d later than %d µs%n",
            probe.scheduling(), HiccupProbe.PERIOD_NANOS / 1000, late.wakeUps(), late.p99Micros(), late.p999Micros(),
            late.maxMicros(), probe.hiccups().size(), stallMicros);
        return late.maxMicros();
    }

    /**
     * What the slow inserts overlapped: {@code withServer} a pause of the server JVM, {@code withClient} (others) one of
     * the client JVM, {@code withHiccup} (others) a platform hiccup; and the slowest insert that overlapped no hiccup,
     * and the slowest that overlapped none of the three ({@code fastMax}, the slowest insert not among the stalls, if
     * none did). Stalls are {start nanoTime, duration ns, insert}.
     */
    record StallCauses(int withServer, int withClient, int withHiccup, long maxWithoutPlatformNanos,
                       long maxWithoutPlatformOrPausesNanos) {
        static StallCauses of(List<long[]> stalls, long fastMax, List<Pauses.Pause> server, List<Pauses.Pause> client,
                              List<Pauses.Pause> hiccups) {
            int withServer = 0;
            int withClient = 0;
            int withHiccup = 0;
            long withoutPlatform = fastMax;
            long withoutPlatformOrPauses = fastMax;
            for (long[] st : stalls) {
                boolean inServerPause = !Pauses.overlapping(server, st[0], st[0] + st[1]).isEmpty();
                boolean inClientPause = !Pauses.overlapping(client, st[0], st[0] + st[1]).isEmpty();
                boolean inHiccup = !Pauses.overlapping(hiccups, st[0], st[0] + st[1]).isEmpty();
                if (inServerPause) {
                    withServer++;
                } else if (inClientPause) {
                    withClient++;
                } else if (inHiccup) {
                    withHiccup++;
                }
                if (!inHiccup) {
                    withoutPlatform = Math.max(withoutPlatform, st[1]);
                    if (!inServerPause && !inClientPause) {
                        withoutPlatformOrPauses = Math.max(withoutPlatformOrPauses, st[1]);
                    }
                }
            }
            return new StallCauses(withServer, withClient, withHiccup, withoutPlatform, withoutPlatformOrPauses);
        }
    }

    /**
     * Prints the inserts slower than --stall-micros: how many overlapped a pause of the server JVM, of this JVM, a
     * hiccup the probe saw (the platform), or none; the insert max without them; the server's pauses during the load;
     * the slowest inserts, each with its start (since the load began, and wall-clock for JFR or a log) and the pauses
     * and hiccups it overlapped. Returns what they overlapped.
     */
    private StallCauses reportStalls(List<long[]> stalls, long fastMax, long start, long end,
                                    List<Pauses.Pause> serverPauses, List<Pauses.Pause> hiccups,
                                    long nanosMinusWallNanos, String loadAfter) {
        List<Pauses.Pause> client = serverMode.equals("embedded") ? List.of() : clientPauses.pauses();
        List<Pauses.Pause> server = serverMode.equals("embedded") ? clientPauses.pauses() : serverPauses;
        StallCauses causes = StallCauses.of(stalls, fastMax, server, client, hiccups);
        List<Pauses.Pause> during = Pauses.overlapping(server, start, end);
        System.out.printf(Locale.ROOT, "  load average after the load: %s%n  %d inserts > %d µs: %d during a pause of the"
                + " server JVM, %d (others) during a pause of the client JVM, %d (others) during a platform hiccup"
                + " (the probe woke late), %d during none%n", loadAfter, stalls.size(), stallMicros, causes.withServer(),
            causes.withClient(), causes.withHiccup(),
            stalls.size() - causes.withServer() - causes.withClient() - causes.withHiccup());
        if (hiccupProbe) {
            System.out.printf(Locale.ROOT, "  insert max without the platform's stalls (the slowest insert that overlapped"
                    + " no hiccup of the probe): %.1f µs; without them or a pause of either JVM: %.1f µs%n",
                causes.maxWithoutPlatformNanos() / 1e3, causes.maxWithoutPlatformOrPausesNanos() / 1e3);
        }
        System.out.printf(Locale.ROOT, "  server JVM pauses during the load: %d, longest %.1f ms, %.1f ms in all%n", during.size(),
            during.stream().mapToLong(Pauses.Pause::nanos).max().orElse(0) / 1e6,
            during.stream().mapToLong(Pauses.Pause::nanos).sum() / 1e6);
        System.out.println("  the slowest inserts (start: since the load began, wall clock, System.nanoTime as -Xlog's timenanos):");
        stalls.stream().sorted((a, b) -> Long.compare(b[1], a[1])).limit(slowest).forEach(st -> {
            StringBuilder why = new StringBuilder();
            for (Pauses.Pause p : Pauses.overlapping(server, st[0], st[0] + st[1])) {
                why.append(String.format(Locale.ROOT, "; server %s %.1f ms", p.what(), p.nanos() / 1e6));
            }
            for (Pauses.Pause p : Pauses.overlapping(client, st[0], st[0] + st[1])) {
                why.append(String.format(Locale.ROOT, "; client %s %.1f ms", p.what(), p.nanos() / 1e6));
            }
            for (Pauses.Pause p : Pauses.overlapping(hiccups, st[0], st[0] + st[1])) {
                why.append("; ").append(p.what());
            }
            long wall = st[0] - nanosMinusWallNanos; // good to a microsecond
            System.out.printf(Locale.ROOT, "    +%.6f s (%s, nanoTime %d) insert %d took %.1f µs%s%n", (st[0] - start) / 1e9,
                java.time.Instant.ofEpochSecond(0, wall), st[0], st[2], st[1] / 1e3, why);
        });
        return causes;
    }

    private BenchServer startServer(String mode, Path work, long capacity, String name) throws IOException {
        long region = regionSize > 0 ? regionSize : io.erda.protocol.memory.LogGeometry.DEFAULT_REGION_SIZE;
        URI listen = URI.create("shm://" + work.resolve("fabric"));
        if (serverMode.equals("embedded")) {
            ServerConfig config = ServerConfig.defaults(work.resolve("store"), listen).withHugePages(HugePages.fromOption(mode))
                .withGeometry(ServerConfig.DEFAULT_HEADS, capacity, region, io.erda.protocol.memory.LogGeometry.DEFAULT_SEGMENT_SIZE);
            RequestServer server = RequestServer.start(config);
            return new BenchServer() {
                public URI uri() {
                    return server.uri();
                }

                public List<Pauses.Pause> pauses() {
                    return clientPauses.pauses();
                }

                public String describe() {
                    return "in this JVM";
                }

                public void close() {
                    server.close();
                }
            };
        }
        Files.createDirectories(out);
        Path pauseLog = out.toAbsolutePath().resolve(name + "-server-pauses.log");
        Files.deleteIfExists(pauseLog);
        List<String> jvm = new ArrayList<>(serverJvmOptions == null ? io.erda.server.ErdaServerMain.defaultJvmOptions()
            : Arrays.stream(serverJvmOptions.trim().split("\\s+")).filter(o -> !o.isEmpty()).toList());
        jvm.add(Pauses.logOption(pauseLog));
        if (serverJfr) {
            jvm.add("-XX:StartFlightRecording=settings=profile,jdk.ThreadPark#threshold=1ms,jdk.JavaMonitorEnter#threshold=1ms,"
                + "jdk.JavaMonitorWait#threshold=1ms,jdk.Compilation#threshold=5ms,filename=" + out.toAbsolutePath().resolve(name + "-server.jfr"));
        }
        List<String> args = List.of("--dir", work.resolve("store").toString(), "--listen", listen.toString(),
            "--heads", Integer.toString(ServerConfig.DEFAULT_HEADS), "--table-capacity", Long.toString(capacity),
            "--region-size", Long.toString(region), "--huge-pages", mode, "--clean-threshold", "0"); // inserts only
        ServerSettings settings = new ServerSettings("shm", work, 0, "wsp", true, Duration.ofSeconds(60), out);
        ServerProcess process = ServerProcess.start(name + "-server", jvm, "io.erda.server.ErdaServerMain", args, settings);
        String described = "process " + process.pid() + " (JVM options: " + String.join(" ", jvm) + ")";
        return new BenchServer() {
            public URI uri() {
                return URI.create(process.uri());
            }

            public List<Pauses.Pause> pauses() {
                return Pauses.read(pauseLog);
            }

            public String describe() {
                return described;
            }

            public void close() {
                process.close();
            }
        };
    }

    /** /proc/loadavg: 1, 5 and 15 minute load averages, running/total tasks. */
    private static String loadAverage() {
        try {
            return Files.readString(Path.of("/proc/loadavg")).trim();
        } catch (IOException e) {
            return "unknown (" + e.getMessage() + ")";
        }
    }

    private static long wallMicros() {
        java.time.Instant now = java.time.Instant.now();
        return now.getEpochSecond() * 1_000_000 + now.getNano() / 1000;
    }

    /** GETs of random keys for {@code seconds}; returns the mean in ns (each GET timed, as YCSB does). */
    private static double timedGets(ErdaClient client, byte[] prefix, int keys, SplittableRandom random, double seconds, Histogram h) {
        long end = System.nanoTime() + (long) (seconds * 1e9);
        long total = 0;
        long count = 0;
        while (System.nanoTime() < end) {
            for (int n = 0; n < 1000; n++) {
                byte[] k = key(prefix, random.nextInt(keys));
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

    private static final byte[] USER = {'u', 's', 'e', 'r'};
    private static final byte[] WARM_UP = {'w', 'a', 'r', 'm'};

    /** A 4-byte prefix ("user", or "warm" for the warm-up's keys) and 12 digits: 16 bytes. */
    static byte[] key(byte[] prefix, int i) {
        byte[] k = new byte[16];
        System.arraycopy(prefix, 0, k, 0, 4);
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
