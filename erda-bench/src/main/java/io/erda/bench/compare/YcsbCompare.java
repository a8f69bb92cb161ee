package io.erda.bench.compare;

import io.erda.bench.backend.ScratchDirectory;
import io.erda.bench.backend.ServerSettings;
import io.erda.bench.backend.StoreBackend;
import io.erda.bench.backend.StoreBackends;
import io.erda.bench.backend.StoreServer;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.LocalDateTime;
import java.time.format.DateTimeFormatter;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.IdentityHashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.Callable;
import java.util.stream.IntStream;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/**
 * The YCSB comparison (scripts/ycsb-compare): for each protocol, a fresh server with the PM write-latency model on
 * (paper §5.1: 150 ns per cache line) and, by default, its log cleaner ({@link #cleanThresholdFor}: every protocol
 * applies into the same log, so the runs measure a store in steady state), a YCSB load, then the workloads, each a YCSB JVM of its own; the server's
 * counters before and after each run give NVM bytes and server CPU per operation. Protocols run one after the
 * other, so only one server is alive at a time and none competes for the cores of another's run. Peer systems
 * ({@code --peers}, Redis by default; {@code PeerSystems}) are further protocols of their own backends, run last.
 */
@Command(name = "ycsb-compare", mixinStandardHelpOptions = true, sortOptions = false,
    description = "YCSB A, B, C and update-only against Erda, Redo Logging and Read After Write, and Redis as a peer, side by side")
public final class YcsbCompare implements Callable<Integer> {

    static final List<Integer> FULL_VALUE_SIZES = List.of(16, 64, 256, 1024, 4096);
    /** Longest wait for a server to settle owed work between runs: the default lease plus the validator's slack. */
    static final long SETTLE_MILLIS = 10_000;
    /** Largest value of a --value-sizes sweep: the largest RDMP-KV object slot takes a 256 KiB value with room to spare. */
    static final long MAX_SWEEP_VALUE = 256L << 10;

    @Option(names = "--fabric", defaultValue = "shm", description = "shm (default; same host), tcp (loopback, each server"
        + " a process) or verbs (an RDMA device, e.g. SoftRoCE's rxe0 in scripts/softroce-vm; each server a process)")
    String fabric;

    @Option(names = "--verbs-host", defaultValue = "127.0.0.1", description = "--fabric verbs: the address servers"
        + " listen on (default 127.0.0.1: client and server on this host, the RDMA traffic on its first device)")
    String verbsHost;

    @Option(names = "--region-size", defaultValue = "64m", converter = io.erda.server.ErdaServerMain.SizeConverter.class,
        description = "size of one PM log region of each server, bytes or with k/m/g (default: ${DEFAULT-VALUE}; 0: the"
        + " server's default, 1 GiB); verbs registers regions whole, so smaller ones start faster")
    long regionSize;

    @Option(names = "--clean-threshold", defaultValue = "auto", description = "each server's log cleaner (paper §4.4)"
        + " cleans a head once its chain occupies more than this, bytes or with k/m/g; auto (default): 192 MiB, or"
        + " twice the loaded data if that is more, so runs measure a store in steady state, cleaner included, as"
        + " all three protocols write into the same log; 0: never (the paper's runs without cleaning)")
    String cleanThreshold;
    /** {@code --clean-threshold} in bytes as {@link #validate} parsed it; null for auto. */
    private Long cleanThresholdBytes;

    @Option(names = "--out", description = "report directory (default: a fresh results/ycsb-TIMESTAMP)")
    Path out;

    @Option(names = "--full", description = "the paper's sweeps: value sizes 16 B to 4 KiB at --threads; threads 1 to --max-threads at 1 KiB")
    boolean full;

    @Option(names = "--protocols", split = ",", defaultValue = "erda,erda-one-sided,redo-log,read-after-write",
        description = "protocols to compare (default: ${DEFAULT-VALUE})")
    List<String> protocols;

    @Option(names = "--peers", split = ",", defaultValue = "redis", description = "other systems run as peer rows after"
        + " the protocols: redis (default; Debian's redis-server, AOF fsynced on every write), or none")
    List<String> peers;

    @Option(names = "--workloads", split = ",", defaultValue = "A,B,C,update-only", description = "workloads (default: ${DEFAULT-VALUE})")
    List<String> workloads;

    @Option(names = "--value-size", defaultValue = "1024", description = "value size in bytes, 16 to 4096 (default: ${DEFAULT-VALUE})")
    int valueSize;

    @Option(names = "--value-sizes", split = ",", converter = io.erda.server.ErdaServerMain.SizeConverter.class,
        description = "a value-size sweep instead of --value-size: sizes in bytes or with k (RDMP-KV's Figs. 7 and 8:"
        + " 64,1k,4k,16k,64k,256k); reports server CPU per operation and server-side PUT throughput per protocol and"
        + " size, plotted against value size. A protocol whose server refuses a size (its limit) skips it, saying so")
    List<Long> valueSizes;

    @Option(names = "--threads", defaultValue = "1", description = "YCSB client threads (default: ${DEFAULT-VALUE})")
    int threads;

    @Option(names = "--max-threads", description = "--full: the thread sweep's largest count (default: 2 × cores)")
    Integer maxThreads;

    @Option(names = "--clients", defaultValue = "1", description = "YCSB client processes per run, each with --threads"
        + " threads; throughput is summed, latency histograms added (default: ${DEFAULT-VALUE})")
    int clients;

    @Option(names = "--max-clients", description = "--full: the process sweep's largest count (default: 2 × cores)")
    Integer maxClients;

    @Option(names = "--warmup", defaultValue = "2", description = "seconds each YCSB process runs the workload before"
        + " the measured window, excluded from every figure; 0: none (default: ${DEFAULT-VALUE})")
    double warmupSeconds;

    @Option(names = "--target-ops", defaultValue = "0", description = "open loop: intended operations per second over all"
        + " threads and processes; latency is measured from each operation's intended start, so a stall is not hidden"
        + " (coordinated omission); 0 (default): closed loop, as fast as the store answers")
    long targetOps;

    @Option(names = "--records", defaultValue = "10000", description = "records loaded (default: ${DEFAULT-VALUE})")
    int records;

    @Option(names = "--operations", defaultValue = "0", description = "operations per run; 0 (default): as many as fit in --duration")
    long operations;

    @Option(names = "--duration", defaultValue = "10", description = "seconds per run at most (default: ${DEFAULT-VALUE})")
    int durationSeconds;

    @Option(names = "--pm-write-latency-ns", defaultValue = "150", description = "modelled PM write latency per cache line (default: ${DEFAULT-VALUE}, paper §5.1)")
    long pmWriteLatencyNs;

    @Option(names = "--persistence", defaultValue = "wsp", description = "persistence method the servers advertise: wsp, read-after-write, server-flush (default: ${DEFAULT-VALUE})")
    String persistence;

    @Option(names = "--pm-dir", description = "where the temporary PM directory goes (default /dev/shm, else the system temp dir)")
    Path pmBase;

    @Option(names = "--huge-pages", defaultValue = "off", description = "the Erda servers' --huge-pages: off (default), or"
        + " thp with --pm-dir on a tmpfs mounted huge=within_size: the log in 2 MiB pages populated when a region is made, so"
        + " no PUT waits for the kernel to allocate the page it writes (as on PM, and as on verbs, where registration pins"
        + " every page); the report says which")
    String hugePages;

    @Option(names = "--verify", description = "YCSB's data integrity check (dataintegrity=true): every value written is derived"
        + " from its key and field, and every value read is checked against it; one that does not match (torn, another key's,"
        + " missing) fails the run. The check costs client CPU per read: compare figures of --verify runs only with each other")
    boolean verify;

    /** Picocli's model of this command: its errors go to the caller's error stream. */
    @CommandLine.Spec
    CommandLine.Model.CommandSpec spec;

    private final PrintStream progress;
    private List<String> skipped = List.of();
    /** Each finished run's histograms, for the percentile plots. */
    private final Map<RunRecord, RunLatency> histograms = new IdentityHashMap<>();

    public YcsbCompare() {
        this(System.out);
    }

    YcsbCompare(PrintStream progress) {
        this.progress = progress;
    }

    public static void main(String[] args) {
        System.exit(new CommandLine(new YcsbCompare()).execute(args));
    }

    /** One server lifetime: a fresh server and PM directory, a load, then the runs. */
    record Group(String protocol, int valueSize, List<Step> steps) { }

    /** One measured YCSB run of a group: {@code clients} processes of {@code threads} threads. */
    record Step(Workload workload, int threads, int clients) { }

    @Override
    public Integer call() throws Exception {
        validate();
        List<String> skipped = new ArrayList<>();
        for (String p : List.copyOf(protocols)) {
            StoreBackends.forProtocol(p).unavailable(p).ifPresent(why -> {
                skipped.add(p + ": " + why);
                progress.println("ycsb-compare: skipping " + p + ": " + why);
            });
        }
        protocols = protocols.stream().filter(p -> skipped.stream().noneMatch(s -> s.startsWith(p + ": "))).toList();
        if (protocols.isEmpty()) {
            progress.println("ycsb-compare: no protocol left to run");
            return 1;
        }
        this.skipped = new ArrayList<>(skipped);
        List<Workload> ws = workloads.stream().map(Workload::of).toList();
        List<Group> plan = plan(ws);
        Path report = out != null ? out : Path.of("results", "ycsb-" + LocalDateTime.now().format(DateTimeFormatter.ofPattern("yyyyMMdd-HHmmss")));
        Files.createDirectories(report);
        Path rawDir = report.resolve("raw");
        Path workloadDir = report.resolve("workloads");
        Map<Workload, Path> workloadFiles = new LinkedHashMap<>();
        for (Workload w : ws) {
            workloadFiles.put(w, w.extractTo(workloadDir));
        }
        Path base = pmBase != null ? pmBase : Files.isDirectory(Path.of("/dev/shm")) ? Path.of("/dev/shm") : Path.of(System.getProperty("java.io.tmpdir"));
        Path scratch = Files.createTempDirectory(base, "erda-ycsb-");
        Thread cleanup = new Thread(() -> {
            // Ctrl-C or a failure: no server or YCSB process outlives the driver, no PM file stays behind.
            ProcessHandle.current().descendants().forEach(ProcessHandle::destroyForcibly);
            deleteTree(scratch);
        }, "ycsb-compare-cleanup");
        Runtime.getRuntime().addShutdownHook(cleanup);
        long steps = plan.stream().mapToLong(g -> g.steps().size()).sum();
        progress.printf(Locale.ROOT, "ycsb-compare: %d runs (%s; %s fabric; %d records; %s per run; PM write latency %d ns; PM files in %s)%n",
            steps, String.join(",", protocols), fabric, records, operations > 0 ? operations + " operations, at most " + durationSeconds + " s" : durationSeconds + " s",
            pmWriteLatencyNs, scratch);
        List<RunRecord> runs = new ArrayList<>();
        try {
            int done = 0;
            for (Group g : plan) {
                runs.addAll(runGroup(g, scratch, rawDir, workloadFiles, done, steps));
                done += g.steps().size();
            }
        } catch (YcsbProcess.FailedRun | ServerStartFailed e) {
            progress.println("ycsb-compare: stopped: " + e.getMessage());
            writeReport(report, runs);
            return 1;
        } finally {
            deleteTree(scratch);
            Runtime.getRuntime().removeShutdownHook(cleanup);
        }
        writeReport(report, runs);
        return 0;
    }

    private void validate() {
        try {
            io.erda.server.platform.HugePages.fromOption(hugePages);
        } catch (IllegalArgumentException e) {
            throw new CommandLine.ParameterException(spec.commandLine(), "--huge-pages: " + e.getMessage());
        }
        if (!fabric.equals("shm") && !fabric.equals("tcp") && !fabric.equals("verbs")) {
            throw new CommandLine.ParameterException(spec.commandLine(), "--fabric " + fabric
                + " is not shm, tcp or verbs");
        }
        if (valueSize < 1 || threads < 1 || records < 1 || durationSeconds < 1 || clients < 1) {
            throw new CommandLine.ParameterException(spec.commandLine(), "--value-size " + valueSize + ", --threads " + threads
                + ", --records " + records + ", --duration " + durationSeconds + " and --clients " + clients
                + " must all be at least 1");
        }
        if (valueSizes != null) {
            for (long size : valueSizes) {
                if (size < 1 || size > MAX_SWEEP_VALUE) {
                    throw new CommandLine.ParameterException(spec.commandLine(), "--value-sizes: " + size
                        + " is outside [1, " + MAX_SWEEP_VALUE + "]");
                }
            }
            if (full) {
                throw new CommandLine.ParameterException(spec.commandLine(), "--value-sizes and --full both choose the"
                    + " value sizes: give one");
            }
        }
        if (!(warmupSeconds >= 0 && warmupSeconds <= 3600)) {
            throw new CommandLine.ParameterException(spec.commandLine(), "--warmup " + warmupSeconds
                + " is not between 0 and 3600 seconds");
        }
        int mostClients = full ? Math.max(clients, maxClientsOrDefault()) : clients;
        if (targetOps < 0 || targetOps > 0 && targetOps < mostClients || targetOps > Integer.MAX_VALUE) {
            throw new CommandLine.ParameterException(spec.commandLine(), "--target-ops " + targetOps + " must be 0 (closed"
                + " loop) or from " + mostClients + " (one per client process) to " + Integer.MAX_VALUE);
        }
        if (!cleanThreshold.equals("auto")) {
            try {
                cleanThresholdBytes = new io.erda.server.ErdaServerMain.SizeConverter().convert(cleanThreshold);
            } catch (CommandLine.TypeConversionException e) {
                throw new CommandLine.ParameterException(spec.commandLine(), "--clean-threshold: " + e.getMessage());
            }
            if (cleanThresholdBytes < 0) {
                throw new CommandLine.ParameterException(spec.commandLine(), "--clean-threshold " + cleanThreshold
                    + " is negative: give auto, 0 (never clean) or a size");
            }
        }
        try {
            protocols = PeerSystems.withPeers(protocols, peers);
        } catch (IllegalArgumentException e) {
            throw new CommandLine.ParameterException(new CommandLine(this), e.getMessage());
        }
        protocols.forEach(StoreBackends::forProtocol);
    }

    List<Group> plan(List<Workload> ws) {
        List<Integer> sizes = valueSizes != null ? valueSizes.stream().map(Long::intValue).toList()
            : full ? FULL_VALUE_SIZES : List.of(valueSize);
        int most = maxThreads != null ? maxThreads : 2 * Runtime.getRuntime().availableProcessors();
        List<Group> groups = new ArrayList<>();
        for (String protocol : protocols) {
            for (int size : sizes) {
                List<Step> steps = new ArrayList<>();
                for (Workload w : ws) {
                    steps.add(new Step(w, threads, clients));
                    if (full && size == 1024) {
                        // the sweeps: threads in one set of --clients processes, then processes of --threads threads
                        IntStream.rangeClosed(1, Math.max(most, threads)).filter(t -> t != threads)
                            .forEach(t -> steps.add(new Step(w, t, clients)));
                        IntStream.rangeClosed(1, Math.max(maxClientsOrDefault(), clients)).filter(k -> k != clients)
                            .forEach(k -> steps.add(new Step(w, threads, k)));
                    }
                }
                steps.sort(Comparator.comparing(Step::workload).thenComparingInt(Step::clients).thenComparingInt(Step::threads));
                groups.add(new Group(protocol, size, steps));
            }
        }
        return groups;
    }

    private int maxClientsOrDefault() {
        return maxClients != null ? maxClients : 2 * Runtime.getRuntime().availableProcessors();
    }

    private List<RunRecord> runGroup(Group g, Path scratch, Path rawDir, Map<Workload, Path> workloadFiles, int done, long total)
        throws Exception {
        StoreBackend backend = StoreBackends.forProtocol(g.protocol());
        String name = fabric + "-" + g.protocol() + "-v" + g.valueSize();
        Path pmDir = Files.createDirectories(scratch.resolve(name));
        // verbs: a process of its own (as on tcp), and a start that may pin a region under emulation
        boolean verbs = fabric.equals("verbs");
        ServerSettings settings = new ServerSettings(fabric, pmDir, pmWriteLatencyNs, persistence, !fabric.equals("shm"),
            Duration.ofSeconds(verbs ? 300 : 60), rawDir, verbsHost, regionSize, cleanThresholdFor(g.valueSize()), hugePages);
        progress.printf(Locale.ROOT, "starting %s server (%s fabric, PM files in %s)%n", g.protocol(), fabric, pmDir);
        List<RunRecord> results = new ArrayList<>();
        StoreServer server;
        try {
            server = backend.start(g.protocol(), settings);
        } catch (IOException e) {
            throw new ServerStartFailed(e.getMessage());
        }
        try (server) {
            String refused = ValueLimit.refusal(g.protocol(), server.uri(), g.valueSize());
            if (refused != null) {
                progress.println("ycsb-compare: skipping " + g.protocol() + " at " + g.valueSize() + " B: " + refused);
                skipped.add(g.protocol() + " at " + g.valueSize() + " B: " + refused);
                return results;
            }
            int loadThreads = g.steps().stream().mapToInt(s -> s.threads() * s.clients()).max().orElse(1);
            Map<String, String> props = properties(g, server.uri());
            progress.printf(Locale.ROOT, "loading %d records of %d B into %s at %s%n", records, g.valueSize(), g.protocol(), server.uri());
            YcsbProcess.run(name + "-load", true, workloadFiles.get(g.steps().getFirst().workload()), props, loadThreads,
                Duration.ofSeconds(600), records, rawDir, progress);
            for (Step s : g.steps()) {
                done++;
                String label = name + "-" + s.workload().label() + "-t" + s.threads() + (s.clients() == 1 ? "" : "-p" + s.clients());
                progress.printf(Locale.ROOT, "[%d/%d] %s: YCSB-%s, %d B values, %d thread%s%s%n", done, total, g.protocol(),
                    s.workload().label(), g.valueSize(), s.threads(), s.threads() == 1 ? "" : "s",
                    s.clients() == 1 ? "" : " in each of " + s.clients() + " client processes");
                CounterWindow counters = new CounterWindow(server);
                counters.settle(SETTLE_MILLIS);
                // the warm-up's deferred work (leases, the baselines' apply) is settled before the measured window opens
                List<YcsbOutput> outputs = YcsbProcess.run(label, false, workloadFiles.get(s.workload()), runProperties(props, s.threads(), s.clients()),
                    s.threads(), s.clients(), warmupSeconds, Duration.ofSeconds(durationSeconds + (long) Math.ceil(warmupSeconds) + 120L),
                    1, rawDir, progress, new YcsbProcess.Hooks(() -> counters.settle(SETTLE_MILLIS), counters::open, counters::close));
                Map<String, Long> before = counters.before();
                Map<String, Long> after = counters.afterSettled(SETTLE_MILLIS);
                Files.writeString(rawDir.resolve(label + ".stats"), counters.describe(), StandardCharsets.UTF_8);
                RunLatency latency = RunLatency.collect(rawDir, label, s.clients());
                RunRecord r = record(g, s, outputs, latency, before, after);
                histograms.put(r, latency);
                progress.printf(Locale.ROOT, "  -> %s ops/s, read %s µs, update %s µs, NVM %s B/op, server CPU %s µs/op%s%n",
                    ComparisonTable.fmt(r.throughputOps()), ComparisonTable.fmt(r.readMeanUs()), ComparisonTable.fmt(r.updateMeanUs()),
                    ComparisonTable.fmt(r.nvmBytesPerOp()), ComparisonTable.fmt(r.serverCpuUsPerOp()),
                    verify ? ", " + outputs.stream().mapToLong(YcsbOutput::verified).sum() + " reads verified (none failed)" : "");
                results.add(r);
            }
        } finally {
            deleteTree(pmDir);
        }
        return results;
    }

    private Map<String, String> properties(Group g, String uri) {
        Map<String, String> p = new LinkedHashMap<>();
        p.put("erda.protocol", g.protocol());
        p.put("erda.uri", uri);
        p.put("recordcount", Integer.toString(records));
        p.put("fieldcount", "1");
        p.put("fieldlength", Integer.toString(g.valueSize()));
        if (verify) {
            p.put("dataintegrity", "true");
        }
        return p;
    }

    /** A run's YCSB properties: per process its share of --operations and of --target-ops. */
    private Map<String, String> runProperties(Map<String, String> load, int threads, int processes) {
        Map<String, String> p = new LinkedHashMap<>(load);
        p.put("operationcount", Long.toString(operations > 0 ? Math.max(1, operations / processes) : Integer.MAX_VALUE));
        p.put("maxexecutiontime", Integer.toString(durationSeconds));
        if (targetOps > 0) {
            // YCSB paces each thread to its share and records both the actual and the intended-start latency
            p.put("target", Long.toString(Math.max(1, targetOps / processes)));
            p.put("measurement.interval", "both");
            p.put("spin.sleep", Boolean.toString(spinPacing(threads, processes, CORES)));
        }
        return p;
    }

    private RunRecord record(Group g, Step s, List<YcsbOutput> outputs, RunLatency latency, Map<String, Long> before,
                             Map<String, Long> after) {
        long reads = outputs.stream().mapToLong(o -> o.ok("READ")).sum();
        long updates = outputs.stream().mapToLong(o -> o.ok("UPDATE")).sum();
        long ops = reads + updates;
        double throughput = outputs.stream().mapToDouble(YcsbOutput::throughput).sum();
        // open loop: the honest latency is from the intended start; closed loop has only the actual one
        String prefix = targetOps > 0 ? "Intended-" : "";
        LatencyFigures read = s.workload().reads ? latency.figures().get(prefix + "READ") : null;
        LatencyFigures update = s.workload().updates ? latency.figures().get(prefix + "UPDATE") : null;
        long counted = (read != null ? read.count() : 0) + (update != null ? update.count() : 0);
        Double mean = counted == 0 ? null
            : ((read != null ? read.count() * read.meanUs() : 0) + (update != null ? update.count() * update.meanUs() : 0)) / counted;
        Double cpuNs = perOp(before, after, "server_cpu_ns", ops);
        Double cleanerCpuNs = perOp(before, after, "cleaner_cpu_ns", ops);
        return new RunRecord(fabric, g.protocol(), s.workload().label(), g.valueSize(), s.threads(), throughput,
            read != null ? read.meanUs() : null, read != null ? read.p99Us() : null,
            update != null ? update.meanUs() : null, update != null ? update.p99Us() : null,
            perOp(before, after, "nvm_bytes_written", ops), cpuNs == null ? null : cpuNs / 1000.0, mean,
            s.clients(), targetOps > 0 ? targetOps : null, latency.figures(), perOp(before, after, "nvm_bytes_cleaner", ops),
            cleanerCpuNs == null ? null : cleanerCpuNs / 1000.0);
    }

    /** Growth of a server counter over a run, per operation; null if the server does not report it. */
    static Double perOp(Map<String, Long> before, Map<String, Long> after, String counter, long ops) {
        Long a = before.get(counter);
        Long b = after.get(counter);
        return a == null || b == null || ops == 0 ? null : (double) (b - a) / ops;
    }

    private void writeReport(Path report, List<RunRecord> runs) throws IOException {
        if (runs.isEmpty()) {
            progress.println("no run completed; raw outputs in " + report.resolve("raw"));
            return;
        }
        String heading = "YCSB comparison: " + fabric + " fabric, " + records + " records, PM write latency " + pmWriteLatencyNs + " ns/line";
        String table = ComparisonTable.markdown(runs, heading, oneSidedConditions(runs, pmWriteLatencyNs, hugePages));
        int afterHeading = table.indexOf("\n\n") + 2;
        table = table.substring(0, afterHeading) + method() + "\n\n" + table.substring(afterHeading);
        table += LatencyTable.markdown(runs) + PeerSystems.markdown(runs);
        if (!skipped.isEmpty()) {
            table += "\n## Not run\n\n" + skipped.stream().map(s -> "- " + s + "\n").reduce("", String::concat);
        }
        if (valueSizes != null) {
            table += ValueSizeTable.markdown(runs);
        }
        table += ValueSizeTable.acceptance(runs);
        Path md = Files.writeString(report.resolve("results.md"), table, StandardCharsets.UTF_8);
        Path json = Files.writeString(report.resolve("summary.json"), SummaryJson.write(runs), StandardCharsets.UTF_8);
        int base = baseValueSize();
        List<Path> plots = new ArrayList<>(ReportPlots.write(runs, base, threads, clients, report));
        plots.addAll(PercentilePlots.write(runs, histograms, base, threads, clients, report));
        progress.println();
        progress.print(table);
        progress.println();
        progress.println("report: " + report);
        progress.println("  " + md);
        progress.println("  " + json);
        plots.forEach(p -> progress.println("  " + p));
        progress.println("  " + report.resolve("raw") + "/ (YCSB stdout/stderr and HdrHistogram logs *.hdr per run, server logs)");
    }

    /** The value size of the report's per-workload figures: the sweep's first, 1 KiB under --full, else --value-size. */
    private int baseValueSize() {
        return valueSizes != null ? valueSizes.getFirst().intValue() : full ? 1024 : valueSize;
    }

    /**
     * The clean threshold of the servers of runs with {@code valueSize}-byte values: {@code --clean-threshold}, or
     * for auto {@link ServerSettings#steadyStateCleanThreshold}.
     */
    long cleanThresholdFor(int valueSize) {
        return cleanThresholdBytes != null ? cleanThresholdBytes : ServerSettings.steadyStateCleanThreshold(records, valueSize);
    }

    private static final int CORES = Runtime.getRuntime().availableProcessors();

    /**
     * Whether open-loop YCSB threads pace themselves by spinning ({@code spin.sleep}) rather than parking until each
     * operation's intended start: only where every client thread has a core of its own and one is left for the
     * server. A parked thread wakes tens of µs late on this VM, and that lateness, not the store, was the
     * intended-start median: YCSB-C on shm at 50k ops/s, one thread, intended-start p50 43.3 µs parked and 1.47 µs
     * spinning (actual-start p50 1.35 and 1.24 µs; 2026-11-28). More spinning threads would take the server's cores.
     */
    static boolean spinPacing(int threads, int processes, int cores) {
        return (long) threads * processes < cores;
    }

    /** How the runs measured, for the top of results.md. */
    String method() {
        String each = clients == 1 ? "one YCSB process" : clients + " YCSB processes, throughput summed and histograms added,";
        String warm = warmupSeconds > 0
            ? "a warm-up of " + ComparisonTable.fmt(warmupSeconds) + " s (the workload run in the same JVM, its operations, time and"
                + " server counters excluded from every figure), then"
            : "no warm-up (--warmup 0): the figures include the cold start;";
        String loop = targetOps > 0
            ? "Open loop at " + targetOps + " ops/s in all: latency is measured from each operation's intended start, so a"
                + " stall counts for every operation it delays; the op-time figures are in the percentile table. Each YCSB"
                + " thread waits for its next intended start spinning where threads × processes is below the cores ("
                + CORES + " here), else parked, which wakes it tens of µs late and counts that too."
            : "Closed loop: each thread issues its next operation when the previous one returns.";
        long threshold = cleanThresholdFor(baseValueSize());
        String cleaning = threshold > 0
            ? " Servers: " + sizeText(regionSize) + " log regions, log cleaner on at " + sizeText(threshold) + " per head"
                + " (every protocol applies into the same log; retired regions are reused, zeroed; the cleaner's CPU and"
                + " NVM bytes are in the figures)."
            : " Servers: " + sizeText(regionSize) + " log regions, no log cleaning (--clean-threshold 0).";
        String pages = hugePages.equalsIgnoreCase("thp")
            ? " Log and table in 2 MiB pages populated when a region is made (--huge-pages thp): no PUT waits for a page to be"
                + " allocated."
            : " Log and table in 4 KiB pages (--huge-pages off): a PUT that is the first to write a page waits for the kernel"
                + " to allocate it.";
        String verified = verify
            ? " Verified (--verify, YCSB's dataintegrity): every value read was checked against the one derived from its key, and"
                + " none failed; the check's client CPU is in every figure."
            : "";
        return "Each run: " + each + " of " + threads + " thread" + (threads == 1 ? "" : "s") + (full ? " (unless the sweep says otherwise)" : "") + "; "
            + warm + " at most " + durationSeconds + " s measured. " + loop + cleaning + pages + verified + " Full latency histograms: raw/RUN-OP.hdr.";
    }

    /**
     * Under the one-sided PUT's acceptance lines, where this run's settings add costs the lines were not set for: the
     * PM write model charges every protocol's writes per line (Redo Logging's twice), a fixed cost beside the one-sided
     * update's own few µs that compresses every ratio, and with 4 KiB pages a first write to each page of the log
     * waits for the kernel to allocate it, which registered RDMA memory and DAX PM do not ask of a PUT.
     */
    static String oneSidedConditions(List<RunRecord> runs, long pmWriteLatencyNs, String hugePages) {
        boolean oneSided = runs.stream().anyMatch(r -> r.protocol().equals("erda-one-sided") && r.fabric().equals("shm"));
        boolean thp = hugePages.equalsIgnoreCase("thp");
        if (!oneSided || pmWriteLatencyNs == 0 && thp) {
            return "";
        }
        return "\nThe one-sided PUT's lines (docs/one-sided-put.md, \"Measured\") were set for the store's own costs: this"
                + " run adds " + (pmWriteLatencyNs > 0 ? "the PM write model (" + pmWriteLatencyNs + " ns per written line,"
                + " to every protocol)" : "") + (pmWriteLatencyNs > 0 && !thp ? " and " : "")
                + (thp ? "" : "page allocation on the log's first writes (4 KiB pages)") + ". They are judged without: "
                + "--huge-pages thp --pm-dir DIR (a tmpfs mounted huge=within_size) --pm-write-latency-ns 0.\n";
    }

    private static String sizeText(long bytes) {
        if (bytes == 0) {
            return "1 GiB (the server's default)";
        }
        return bytes % (1L << 20) == 0 ? (bytes >> 20) + " MiB" : bytes + " B";
    }

    private static void deleteTree(Path dir) {
        try {
            ScratchDirectory.delete(dir);
        } catch (IOException | RuntimeException ignored) {
            // Best effort at exit; a leftover directory is named in the start line.
        }
    }

    /** A server that did not start, with its reason (and its output's tail). */
    static final class ServerStartFailed extends Exception {
        ServerStartFailed(String message) {
            super(message);
        }
    }
}
