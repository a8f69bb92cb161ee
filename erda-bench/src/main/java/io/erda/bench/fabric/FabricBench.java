package io.erda.bench.fabric;

import io.erda.bench.fabric.FabricPair.Operation;
import io.erda.fabric.Fabric;
import io.erda.fabric.MemoryRegion;
import io.erda.fabric.SyncEndpoint;
import java.io.BufferedReader;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.Callable;
import java.util.concurrent.TimeUnit;
import java.util.function.IntFunction;
import org.HdrHistogram.Histogram;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/**
 * Micro-benchmark of the fabric providers side by side: target and initiator are two fabric instances in this
 * process, connected over the provider's real transport. Per provider, single connection: 64 B READ, 64 B WRITE
 * (to its acknowledgement), 64 B WRITE then READ, 4 KiB READ, SEND/RECV ping-pong against an echo thread; then 64 B
 * READ from 2 and 4 initiator threads (one endpoint each); {@code --cases} picks some. Prints a Markdown table, ratios
 * to the first provider, and the target's engine CPU per op.
 *
 * <p>Every case is warmed up once, then measured {@code --rounds} times in the same JVM (each round measures every
 * case once, in order, and prints its own table), so that the JIT's work is done before the first round and rounds
 * can be interleaved with other programs: with {@code --gate} a round starts only when a line arrives on standard
 * input (end of input ends the run); a line naming cases ({@code read} or {@code read,write}) measures only those in
 * that round, any other line ({@code go}) every case. The end of the warm-up is announced on standard error by a line
 * starting with {@code warmed up}, and the end of each round by the line {@code round N of R measured}, after its
 * table. With several rounds the last table holds each case's median over the rounds that measured it.
 */
@Command(name = "fabric-bench", mixinStandardHelpOptions = true, description = "Fabric provider latency and rate")
public final class FabricBench implements Callable<Integer> {

    /** The cases, by the id {@code --cases} takes, in the order they run. */
    static final Map<String, String> CASES = casesInOrder();

    private static Map<String, String> casesInOrder() {
        Map<String, String> cases = new LinkedHashMap<>();
        cases.put("read", "READ 64 B");
        cases.put("write", "WRITE 64 B");
        cases.put("write-read", "WRITE 64 B + READ");
        cases.put("read-4k", "READ 4 KiB");
        cases.put("ping-pong", "SEND/RECV ping-pong 64 B");
        cases.put("read-x2", "READ 64 B x2 threads");
        cases.put("read-x4", "READ 64 B x4 threads");
        return java.util.Collections.unmodifiableMap(cases);
    }

    @Option(names = "--providers", split = ",", description = "schemes to compare (default: every one on the class path)")
    List<String> providers;

    @Option(names = "--cases", split = ",", description = "cases to run, of: read, write, write-read, read-4k, ping-pong, read-x2, read-x4 (default: all)")
    List<String> cases;

    @Option(names = "--duration", defaultValue = "2", description = "measured seconds per case and round")
    double durationSeconds;

    @Option(names = "--warmup", defaultValue = "1", description = "warm-up seconds per case (once, before the first round)")
    double warmupSeconds;

    @Option(names = "--rounds", defaultValue = "1", description = "measured rounds after the warm-up (1..1000)")
    int rounds;

    @Option(names = "--gate", description = "start each round when a line arrives on standard input; a line naming"
            + " cases (e.g. read) measures only those")
    boolean gate;

    @Option(names = "--dir", description = "directory for the target's region files (default /dev/shm if present)")
    Path dir;

    @CommandLine.Spec
    CommandLine.Model.CommandSpec spec;

    /** Where the tables go, where --gate reads and where the round announcements go (tests replace them). */
    PrintStream out = System.out;
    InputStream gateInput = System.in;
    PrintStream progress = System.err;

    /** One measured case of one provider. */
    record Result(String provider, String bench, double opsPerSecond, double p50Micros, double p99Micros, double engineNanosPerOp) { }

    /** A case ready to run: its operation per thread over fixtures that stay open for every round. */
    private record Case(String name, int threads, IntFunction<Operation> perThread) { }

    public static void main(String[] args) {
        System.exit(new CommandLine(new FabricBench()).execute(args));
    }

    @Override
    public Integer call() throws Exception {
        if (rounds < 1 || rounds > 1000) {
            throw new CommandLine.ParameterException(spec.commandLine(), "--rounds " + rounds + " outside 1..1000");
        }
        List<String> selected = cases != null ? cases : new ArrayList<>(CASES.keySet());
        for (String id : selected) {
            if (!CASES.containsKey(id)) {
                throw new CommandLine.ParameterException(spec.commandLine(), "--cases: unknown case '" + id
                        + "', known: " + String.join(", ", CASES.keySet()));
            }
        }
        List<String> schemes = providers != null ? providers : new ArrayList<>(Fabric.schemes());
        Path base = dir != null ? dir : Files.isDirectory(Path.of("/dev/shm")) ? Path.of("/dev/shm") : Path.of(System.getProperty("java.io.tmpdir"));
        BufferedReader gateReader = gate ? new BufferedReader(new InputStreamReader(gateInput, StandardCharsets.UTF_8)) : null;
        List<List<Result>> byRound = new ArrayList<>();
        for (String scheme : schemes) {
            Path work = Files.createTempDirectory(base, "fabric-bench-" + scheme);
            try {
                List<List<Result>> runs = new ProviderRun(scheme, work, selected).run(gateReader);
                for (int r = 0; r < runs.size(); r++) {
                    if (byRound.size() <= r) {
                        byRound.add(new ArrayList<>());
                    }
                    byRound.get(r).addAll(runs.get(r));
                }
            } catch (Exception e) {
                progress.println("provider " + scheme + " skipped: " + e);
            } finally {
                try (var files = Files.walk(work)) {
                    files.sorted(java.util.Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
                }
            }
        }
        if (byRound.size() > 1) {
            out.println();
            out.println("Median of " + byRound.size() + " rounds:");
        }
        print(median(byRound), out);
        return 0;
    }

    /** Per provider and case, the median of each figure over the rounds (the one result when there is one round). */
    static List<Result> median(List<List<Result>> byRound) {
        if (byRound.isEmpty()) {
            return List.of();
        }
        List<Result> medians = new ArrayList<>();
        java.util.Set<String> seen = new java.util.HashSet<>();
        List<Result> firsts = byRound.stream().flatMap(List::stream)
                .filter(r -> seen.add(r.provider() + "\u0000" + r.bench())).toList();
        for (Result first : firsts) {
            List<Result> same = byRound.stream().flatMap(List::stream)
                    .filter(r -> r.provider().equals(first.provider()) && r.bench().equals(first.bench())).toList();
            medians.add(new Result(first.provider(), first.bench(), median(same, Result::opsPerSecond),
                    median(same, Result::p50Micros), median(same, Result::p99Micros), median(same, Result::engineNanosPerOp)));
        }
        return medians;
    }

    private static double median(List<Result> results, java.util.function.ToDoubleFunction<Result> figure) {
        double[] values = results.stream().mapToDouble(figure).sorted().toArray();
        int n = values.length;
        return n % 2 == 1 ? values[n / 2] : (values[n / 2 - 1] + values[n / 2]) / 2;
    }

    /** The fixture of one provider ({@link FabricPair}) and the endpoints of the cases. */
    private final class ProviderRun {
        private final String scheme;
        private final Path work;
        private final List<String> selected;
        private FabricPair pair;

        ProviderRun(String scheme, Path work, List<String> selected) {
            this.scheme = scheme;
            this.work = work;
            this.selected = selected;
        }

        /** The results of each round. */
        List<List<Result>> run(BufferedReader gateReader) throws Exception {
            try (FabricPair p = FabricPair.open(scheme, work)) {
                pair = p;
                Map<String, Case> ready = new java.util.LinkedHashMap<>();
                for (String id : selected) {
                    ready.put(id, prepare(id));
                }
                for (Case c : ready.values()) {
                    runFor(c.threads(), c.perThread(), warmupSeconds, null);
                }
                if (gateReader != null) {
                    progress.println("warmed up (" + scheme + "): waiting for a line on standard input per round");
                    progress.flush();
                }
                List<List<Result>> results = new ArrayList<>();
                for (int round = 1; round <= rounds; round++) {
                    List<String> only = List.copyOf(ready.keySet());
                    if (gateReader != null) {
                        String line = gateReader.readLine();
                        if (line == null) {
                            break; // the driver is done
                        }
                        List<String> named = java.util.Arrays.stream(line.split(",")).map(String::strip)
                                .filter(ready::containsKey).toList();
                        if (!named.isEmpty()) {
                            only = named; // e.g. scripts/softroce-bench: READ rounds first, WRITE rounds after
                        }
                    }
                    List<Result> measured = new ArrayList<>();
                    for (String id : only) {
                        measured.add(measure(ready.get(id)));
                    }
                    results.add(measured);
                    if (rounds > 1) {
                        out.println();
                        out.println(String.format(Locale.ROOT, "Round %d of %d (%s, %s s per case):", round, rounds,
                                scheme, durationSeconds));
                        printTable(measured, out);
                        out.flush();
                        progress.println("round " + round + " of " + rounds + " measured");
                        progress.flush();
                    }
                }
                return results;
            }
        }

        /** The fixtures of one case, open until the run ends. */
        private Case prepare(String id) throws Exception {
            String name = CASES.get(id);
            MemoryRegion remote = pair.remote();
            long at = remote.address();
            int rkey = remote.rkey();
            return switch (id) {
                case "read" -> {
                    Operation op = pair.read64();
                    yield new Case(name, 1, t -> op);
                }
                case "write", "write-read", "read-4k" -> {
                    SyncEndpoint one = pair.syncEndpoint();
                    MemoryRegion local = pair.local(8192);
                    Operation op = switch (id) {
                        // a signalled WRITE completes when the target acknowledged it: one round trip
                        case "write" -> () -> one.write(local, 128, 64, at + 8192, rkey);
                        case "write-read" -> () -> {
                            one.write(local, 0, 64, at + 4096, rkey);
                            one.read(local, 64, 64, at + 4096, rkey);
                        };
                        default -> () -> one.read(local, 4096, 4096, at, rkey);
                    };
                    yield new Case(name, 1, t -> op);
                }
                case "ping-pong" -> {
                    Operation op = pair.pingPong(64);
                    yield new Case(name, 1, t -> op);
                }
                default -> {
                    int threads = id.equals("read-x2") ? 2 : 4;
                    List<SyncEndpoint> endpoints = new ArrayList<>();
                    List<MemoryRegion> locals = new ArrayList<>();
                    for (int i = 0; i < threads; i++) {
                        endpoints.add(pair.syncEndpoint());
                        locals.add(pair.local(64));
                    }
                    yield new Case(name, threads,
                            t -> () -> endpoints.get(t).read(locals.get(t), 0, 64, at + 64L * t, rkey));
                }
            };
        }

        private Result measure(Case c) throws Exception {
            Histogram all = new Histogram(TimeUnit.SECONDS.toNanos(10), 3);
            long cpuBefore = pair.target().stats().engineCpuNanos();
            long start = System.nanoTime();
            long ops = runFor(c.threads(), c.perThread(), durationSeconds, all);
            double seconds = (System.nanoTime() - start) / 1e9;
            long cpu = pair.target().stats().engineCpuNanos() - cpuBefore;
            return new Result(scheme, c.name(), ops / seconds, all.getValueAtPercentile(50) / 1e3,
                    all.getValueAtPercentile(99) / 1e3, ops == 0 ? 0 : (double) cpu / ops);
        }

        private long runFor(int threads, IntFunction<Operation> perThread, double seconds, Histogram into)
                throws Exception {
            long end = System.nanoTime() + (long) (seconds * 1e9);
            List<Thread> workers = new ArrayList<>();
            Histogram[] histograms = new Histogram[threads];
            long[] counts = new long[threads];
            Exception[] failure = new Exception[1];
            for (int t = 0; t < threads; t++) {
                int id = t;
                Operation op = perThread.apply(t);
                histograms[t] = new Histogram(TimeUnit.SECONDS.toNanos(10), 3);
                workers.add(Thread.ofPlatform().start(() -> {
                    try {
                        long now;
                        while ((now = System.nanoTime()) < end) {
                            op.run();
                            histograms[id].recordValue(Math.min(System.nanoTime() - now, TimeUnit.SECONDS.toNanos(10)));
                            counts[id]++;
                        }
                    } catch (Exception e) {
                        failure[0] = e;
                    }
                }));
            }
            long total = 0;
            for (int t = 0; t < threads; t++) {
                workers.get(t).join();
                total += counts[t];
                if (into != null) {
                    into.add(histograms[t]);
                }
            }
            if (failure[0] != null) {
                throw failure[0];
            }
            return total;
        }
    }

    private static void printTable(List<Result> results, PrintStream out) {
        out.println("| provider | case | ops/s | p50 µs | p99 µs | target engine CPU ns/op |");
        out.println("|---|---|---:|---:|---:|---:|");
        for (Result r : results) {
            out.println(String.format(Locale.ROOT, "| %s | %s | %,.0f | %.1f | %.1f | %,.0f |", r.provider(), r.bench(),
                    r.opsPerSecond(), r.p50Micros(), r.p99Micros(), r.engineNanosPerOp()));
        }
    }

    private static void print(List<Result> results, PrintStream out) {
        out.println();
        printTable(results, out);
        Map<String, Result> first = new LinkedHashMap<>();
        for (Result r : results) {
            first.putIfAbsent(r.bench(), r);
        }
        boolean several = results.stream().map(Result::provider).distinct().count() > 1;
        if (several) {
            out.println();
            out.println("Ratios to " + results.getFirst().provider() + " (rate ×, p50 ×):");
            out.println();
            out.println("| provider | case | rate ratio | p50 ratio |");
            out.println("|---|---|---:|---:|");
            for (Result r : results) {
                Result b = first.get(r.bench());
                out.println(String.format(Locale.ROOT, "| %s | %s | %.2f | %.2f |", r.provider(), r.bench(),
                        r.opsPerSecond() / b.opsPerSecond(), r.p50Micros() / b.p50Micros()));
            }
        } else {
            Map<String, Result> byCase = new LinkedHashMap<>();
            results.forEach(r -> byCase.put(r.bench(), r));
            Result single = byCase.get("READ 64 B");
            if (single != null) {
                out.println();
                out.println("Ratios to the single-thread 64 B READ rate:");
                byCase.values().forEach(r -> out.println(String.format(Locale.ROOT, "- %s: %.2f", r.bench(),
                        r.opsPerSecond() / single.opsPerSecond())));
            }
        }
    }
}
