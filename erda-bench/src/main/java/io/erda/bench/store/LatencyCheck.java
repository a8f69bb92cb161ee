package io.erda.bench.store;

import io.erda.bench.fabric.FabricPair;
import io.erda.client.ClientOptions;
import io.erda.client.KeyValueClient;
import io.erda.protocol.PersistenceMethod;
import io.erda.protocol.PutMode;
import io.erda.server.RequestServer;
import io.erda.server.ServerConfig;
import java.io.PrintStream;
import java.lang.management.ManagementFactory;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.SplittableRandom;
import org.HdrHistogram.Histogram;

/**
 * store-bench {@code --latency-check}: an Erda GET and PUT next to the fabric's own round trips, as ratios measured
 * side by side in one run. Per fabric, in this JVM: a fabric pair ({@link FabricPair}: 64 B READ, 64 B SEND/RECV
 * ping-pong), a server with the PM write-latency model ({@code RequestServer}; in steady state as ycsb-compare's: 64 MiB
 * regions, the log cleaner on, its retired regions reused) and one Erda and one Redo Logging client connection. After loading the keys and one unmeasured warm-up of everything, each round measures, in this
 * order, the READ and the ping-pong, then YCSB's mixes on the Erda client (C: GETs only; update-only; A: 50% PUTs;
 * B: 5% PUTs; keys uniform, closed loop, one thread), then Redo Logging update-only and update-only against a second
 * server in one-sided mode ({@code --put one-sided}, docs/one-sided-put.md), and prints its means; the last
 * table holds the medians of the rounds. Ratios are to the same round's READ; Erda ÷ Redo is update-only
 * throughput (one closed-loop thread: the inverse ratio of the means). It reports; it fails nothing.
 *
 * <p>"cores" is this JVM's CPU time over wall time during a mix: client, server and fabric threads together, so a
 * server that spins instead of sleeping shows there. A last table gives the update-only PUTs' percentiles over all
 * rounds (HdrHistogram), Erda's next to Redo Logging's: whether a ratio of means comes from every PUT or from a tail.
 */
final class LatencyCheck {
    /** Share of PUTs per mix, in the order they run. */
    enum Mix {
        C(0), UPDATE_ONLY(1), A(0.5), B(0.05);

        final double putShare;

        Mix(double putShare) {
            this.putShare = putShare;
        }
    }

    /** Means of one mix, µs (NaN where the mix has no such operation), the JVM's cores busy, and every PUT's ns. */
    record MixResult(double getMicros, double putMicros, double cores, Histogram puts) { }

    /** One round of one fabric; {@code oneSided}: update-only against the server in one-sided mode. */
    record Round(double readMicros, double pingPongMicros, MixResult[] mixes, MixResult redo, MixResult oneSided) {
        double redoPutMicros() {
            return redo.putMicros();
        }

        MixResult mix(Mix m) {
            return mixes[m.ordinal()];
        }
    }

    private final List<String> fabrics;
    private final int rounds;
    private final double seconds;
    private final int keys;
    private final int valueSize;
    private final long pmWriteLatencyNanos;
    private final PersistenceMethod persistence;
    private final Path base;
    private final PrintStream out;

    LatencyCheck(List<String> fabrics, int rounds, double seconds, int keys, int valueSize, long pmWriteLatencyNanos,
                 PersistenceMethod persistence, Path base, PrintStream out) {
        this.fabrics = fabrics;
        this.rounds = rounds;
        this.seconds = seconds;
        this.keys = keys;
        this.valueSize = valueSize;
        this.pmWriteLatencyNanos = pmWriteLatencyNanos;
        this.persistence = persistence;
        this.base = base;
        this.out = out;
    }

    void run() throws Exception {
        out.printf(Locale.ROOT, "latency check: %d keys, %d B values, persistence %s, PM write model %d ns per line"
                + " (%.1f µs per PUT of the WRITE's %d lines and the entry's 1, included below), %d rounds of %.1f s per"
                + " figure; %d cores, load average %.2f at start%n", keys, valueSize, persistence.option(),
                pmWriteLatencyNanos, modelledPutMicros(), objectLines(), rounds, seconds,
                Runtime.getRuntime().availableProcessors(), ManagementFactory.getOperatingSystemMXBean().getSystemLoadAverage());
        for (String fabric : fabrics) {
            Path work = Files.createTempDirectory(base, "latency-check-" + fabric + "-");
            try {
                List<Round> measured = runFabric(fabric, work);
                print(fabric, measured);
            } finally {
                io.erda.bench.backend.ScratchDirectory.delete(work);
            }
        }
    }

    /** Cache lines the WRITE of one object covers (aligned at 8 bytes, so at most one more than its length needs). */
    private int objectLines() {
        long object = (12 + StoreBench.KEY_LENGTH + valueSize + 7) & -8L;
        return (int) ((object + 63) / 64 + 1);
    }

    private double modelledPutMicros() {
        return (objectLines() + 1) * pmWriteLatencyNanos / 1000.0;
    }

    /** Starts the server's log cleaner at the steady-state threshold for this check's keys; returns the server. */
    private RequestServer startCleaning(RequestServer server) {
        server.startCleaning(io.erda.bench.backend.ServerSettings.steadyStateCleanThreshold(keys, valueSize));
        return server;
    }

    private List<Round> runFabric(String fabric, Path work) throws Exception {
        URI listen = switch (fabric) {
            case "tcp" -> URI.create("tcp://127.0.0.1:0");
            case "shm" -> URI.create("shm://" + work.resolve("fabric"));
            default -> throw new IllegalArgumentException("fabric " + fabric + " is not tcp or shm");
        };
        Files.createDirectories(work.resolve("pair"));
        // in steady state, as ycsb-compare's servers: the cleaner bounds the log and its regions are reused, so the
        // figures do not depend on how much fresh memory the machine has at hand (ServerSettings)
        ServerConfig config = config(work.resolve("store"), listen, PutMode.RESERVE);
        // the one-sided PUT's updates (docs/one-sided-put.md) need a server in that mode: a second one, the same else
        URI oneSidedListen = fabric.equals("shm") ? URI.create("shm://" + work.resolve("fabric-one-sided")) : listen;
        ServerConfig oneSidedConfig = config(work.resolve("store-one-sided"), oneSidedListen, PutMode.ONE_SIDED);
        byte[][] keyBytes = new byte[keys][];
        for (int i = 0; i < keys; i++) {
            keyBytes[i] = String.format(Locale.ROOT, "key-lc-%09d", i).getBytes(StandardCharsets.US_ASCII);
        }
        byte[] value = new byte[valueSize];
        new SplittableRandom(valueSize).nextBytes(value);
        try (FabricPair pair = FabricPair.open(fabric, work.resolve("pair"));
             RequestServer server = startCleaning(RequestServer.start(config));
             KeyValueClient erda = KeyValueClient.connect(ClientOptions.of(server.uri()).withPoolSize(1));
             KeyValueClient redo = KeyValueClient.connect(ClientOptions.of(server.uri()).withPoolSize(1)
                     .withProtocol(ClientOptions.Protocol.REDO_LOG));
             RequestServer oneSidedServer = startCleaning(RequestServer.start(oneSidedConfig));
             KeyValueClient oneSided = KeyValueClient.connect(ClientOptions.of(oneSidedServer.uri()).withPoolSize(1))) {
            FabricPair.Operation read = pair.read64();
            FabricPair.Operation pingPong = pair.pingPong(64);
            for (byte[] k : keyBytes) {
                erda.put(k, value);
                oneSided.put(k, value);
            }
            SplittableRandom random = new SplittableRandom(42);
            // unmeasured: the JIT, the page faults of fresh log and redo memory
            time(read, seconds);
            time(pingPong, seconds);
            for (Mix m : Mix.values()) {
                mix(erda, m, keyBytes, value, random, seconds);
            }
            mix(redo, Mix.UPDATE_ONLY, keyBytes, value, random, seconds);
            mix(oneSided, Mix.UPDATE_ONLY, keyBytes, value, random, seconds);
            List<Round> measured = new ArrayList<>();
            for (int r = 0; r < rounds; r++) {
                double readMicros = time(read, seconds);
                double pingMicros = time(pingPong, seconds);
                MixResult[] mixes = new MixResult[Mix.values().length];
                for (Mix m : Mix.values()) {
                    mixes[m.ordinal()] = mix(erda, m, keyBytes, value, random, seconds);
                }
                MixResult redoPuts = mix(redo, Mix.UPDATE_ONLY, keyBytes, value, random, seconds);
                MixResult oneSidedPuts = mix(oneSided, Mix.UPDATE_ONLY, keyBytes, value, random, seconds);
                measured.add(new Round(readMicros, pingMicros, mixes, redoPuts, oneSidedPuts));
            }
            return measured;
        }
    }

    /** The check's server: in steady state as ycsb-compare's (the cleaner bounds the log, regions are reused). */
    private ServerConfig config(Path store, URI listen, PutMode put) {
        return ServerConfig.builder(store, listen).regionSize(io.erda.bench.backend.ServerSettings.STEADY_STATE_REGION_SIZE)
                .persistence(persistence).pmWriteLatencyNanos(pmWriteLatencyNanos).put(put).build();
    }

    /** Mean µs of {@code op} run back to back for {@code seconds}. */
    private static double time(FabricPair.Operation op, double seconds) throws Exception {
        long start = System.nanoTime();
        long end = start + (long) (seconds * 1e9);
        long n = 0;
        long now;
        do {
            op.run();
            n++;
        } while ((now = System.nanoTime()) < end);
        return (now - start) / 1e3 / n;
    }

    private static MixResult mix(KeyValueClient client, Mix mix, byte[][] keys, byte[] value, SplittableRandom random,
                                 double seconds) {
        long getNanos = 0;
        long gets = 0;
        long putNanos = 0;
        long puts = 0;
        Histogram putHistogram = new Histogram(3);
        var os = (com.sun.management.OperatingSystemMXBean) ManagementFactory.getOperatingSystemMXBean();
        long cpuBefore = os.getProcessCpuTime();
        long start = System.nanoTime();
        long end = start + (long) (seconds * 1e9);
        long now = start;
        while (now < end) {
            byte[] key = keys[random.nextInt(keys.length)];
            boolean put = mix.putShare > 0 && random.nextDouble() < mix.putShare;
            long t0 = now;
            if (put) {
                client.put(key, value);
            } else if (client.get(key) == null) {
                throw new IllegalStateException("a loaded key reads as not found");
            }
            now = System.nanoTime();
            if (put) {
                putNanos += now - t0;
                puts++;
                putHistogram.recordValue(now - t0);
            } else {
                getNanos += now - t0;
                gets++;
            }
        }
        double cores = (os.getProcessCpuTime() - cpuBefore) / (double) (now - start);
        return new MixResult(gets == 0 ? Double.NaN : getNanos / 1e3 / gets, puts == 0 ? Double.NaN : putNanos / 1e3 / puts,
                cores, putHistogram);
    }

    /** The columns of one round: means, then ratios to its own READ, then the cores busy per mix. */
    static double[] columns(Round r) {
        double read = r.readMicros();
        double erdaPut = r.mix(Mix.UPDATE_ONLY).putMicros();
        return new double[] {read, r.pingPongMicros(), r.mix(Mix.C).getMicros(), erdaPut, r.mix(Mix.A).getMicros(),
            r.mix(Mix.A).putMicros(), r.mix(Mix.B).getMicros(), r.mix(Mix.B).putMicros(), r.redoPutMicros(),
            r.mix(Mix.C).getMicros() / read, erdaPut / read, r.mix(Mix.A).putMicros() / read,
            r.mix(Mix.B).putMicros() / read, r.redoPutMicros() / erdaPut, r.mix(Mix.C).cores(),
            r.mix(Mix.UPDATE_ONLY).cores(), r.mix(Mix.A).cores(), r.mix(Mix.B).cores(), r.oneSided().putMicros(),
            r.oneSided().putMicros() / read};
    }

    private void print(String fabric, List<Round> measured) {
        out.println();
        out.println("### " + fabric + ": means in µs; ratios to the same round's READ round trip");
        out.println();
        out.println("| round | READ | SEND/RECV | GET (C) | PUT (update-only) | GET (A) | PUT (A) | GET (B) | PUT (B) | Redo PUT"
                + " (update-only) | GET (C) ÷ READ | PUT (update-only) ÷ READ | PUT (A) ÷ READ | PUT (B) ÷ READ |"
                + " Erda ÷ Redo update-only ops/s | cores C / update-only / A / B | one-sided PUT (update-only) |"
                + " one-sided PUT ÷ READ |");
        out.println("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|---:|---:|");
        List<double[]> rows = measured.stream().map(LatencyCheck::columns).toList();
        for (int r = 0; r < rows.size(); r++) {
            out.println(row(Integer.toString(r + 1), rows.get(r)));
        }
        if (rows.size() > 1) {
            out.println(row("median", median(rows)));
        }
        Histogram erdaPuts = new Histogram(3);
        Histogram redoPuts = new Histogram(3);
        Histogram oneSidedPuts = new Histogram(3);
        for (Round r : measured) {
            erdaPuts.add(r.mix(Mix.UPDATE_ONLY).puts());
            redoPuts.add(r.redo().puts());
            oneSidedPuts.add(r.oneSided().puts());
        }
        out.println();
        out.println("### " + fabric + ": update-only PUT percentiles over all " + measured.size() + " rounds, µs");
        out.println();
        out.println("| protocol | PUTs | p50 | p90 | p99 | p99.9 | max | mean |");
        out.println("|---|---:|---:|---:|---:|---:|---:|---:|");
        out.println(percentiles("Erda", erdaPuts));
        out.println(percentiles("Redo Logging", redoPuts));
        out.println(percentiles("Erda, one-sided PUT", oneSidedPuts));
        out.println(String.format(Locale.ROOT, "| Redo ÷ Erda | | %.2f | %.2f | %.2f | %.2f | %.2f | %.2f |",
                ratio(redoPuts, erdaPuts, 50), ratio(redoPuts, erdaPuts, 90), ratio(redoPuts, erdaPuts, 99),
                ratio(redoPuts, erdaPuts, 99.9), (double) redoPuts.getMaxValue() / erdaPuts.getMaxValue(),
                redoPuts.getMean() / erdaPuts.getMean()));
    }

    private static String percentiles(String label, Histogram h) {
        return String.format(Locale.ROOT, "| %s | %d | %.2f | %.2f | %.2f | %.2f | %.1f | %.2f |", label,
                h.getTotalCount(), h.getValueAtPercentile(50) / 1e3, h.getValueAtPercentile(90) / 1e3,
                h.getValueAtPercentile(99) / 1e3, h.getValueAtPercentile(99.9) / 1e3, h.getMaxValue() / 1e3,
                h.getMean() / 1e3);
    }

    private static double ratio(Histogram numerator, Histogram denominator, double percentile) {
        return (double) numerator.getValueAtPercentile(percentile) / denominator.getValueAtPercentile(percentile);
    }

    private static String row(String label, double[] c) {
        return String.format(Locale.ROOT, "| %s | %.1f | %.1f | %.1f | %.1f | %.1f | %.1f | %.1f | %.1f | %.1f | %.2f | %.2f"
                + " | %.2f | %.2f | %.2f | %.2f / %.2f / %.2f / %.2f | %.1f | %.2f |", label, c[0], c[1], c[2], c[3], c[4],
                c[5], c[6], c[7], c[8], c[9], c[10], c[11], c[12], c[13], c[14], c[15], c[16], c[17], c[18], c[19]);
    }

    /** Each column's median over the rounds (ratios too: the median of the per-round ratios). */
    static double[] median(List<double[]> rows) {
        double[] m = new double[rows.getFirst().length];
        for (int i = 0; i < m.length; i++) {
            int col = i;
            double[] v = rows.stream().mapToDouble(r -> r[col]).sorted().toArray();
            int n = v.length;
            m[i] = n % 2 == 1 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
        }
        return m;
    }
}
