package io.erda.remotelog;

import io.erda.fabric.Fabric;
import io.erda.protocol.PmConfiguration;
import io.erda.remotelog.Taxonomy.Verdict;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.Spec;
import picocli.CommandLine;

import java.io.IOException;
import java.io.PrintStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.EnumMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.Callable;

/**
 * REMOTELOG (paper §4): appends checksummed records to a log on a responder over one fabric with every method, times
 * them, and in every configuration lets power fail at random moments and checks what recovery finds against what was
 * acknowledged. Prints one table, configuration × method → latency, responder CPU, power failures survived, and the
 * paper's verdict next to what the run showed; then the paper's findings as ratios; last line
 * {@code remotelog scenarios N, correct C (0 lost), incorrect shown I, unobservable U}. Exit status 1 when a cell the
 * paper marks correct lost an append.
 *
 * <p>Latency is measured once per method: the configurations are emulated (what survives a power failure), not
 * hardware, so a method costs the same in each; the paper's figures differ by configuration only through the method
 * each prescribes.
 */
@Command(name = "remotelog", mixinStandardHelpOptions = true,
        description = "The remote-persistence taxonomy's methods × configurations: latency and power-failure survival.")
public final class RemoteLogBench implements Callable<Integer> {
    @Option(names = "--fabric", description = "shm, tcp or verbs (default ${DEFAULT-VALUE})")
    String fabric = "shm";
    @Option(names = "--transport", description = "what a completion means: infiniband (also RoCE, tcp, shm: the "
            + "responder received the request) or iwarp (only sent; WSP then needs a Flush) (default ${DEFAULT-VALUE})")
    String transport = "infiniband";
    @Option(names = "--records", description = "timed appends per method (default ${DEFAULT-VALUE})")
    int records = 10_000;
    @Option(names = "--record-size", description = "bytes per record, a multiple of 8 (default ${DEFAULT-VALUE})")
    int recordSize = 64;
    @Option(names = "--warmup", description = "untimed appends before the timed ones (default: records / 10)")
    Integer warmup;
    @Option(names = "--failures", description = "power failures per configuration × method (default ${DEFAULT-VALUE})")
    int failures = 200;
    @Option(names = "--seed", description = "draws the moments of power failure and what survives (default ${DEFAULT-VALUE})")
    long seed = 1;
    @Option(names = "--configurations", split = ",", description = "configurations to run (default: all twelve)")
    List<String> configurations;
    @Option(names = "--methods", split = ",", description = "methods to run (default: all)")
    List<String> methods;
    @Option(names = "--work", description = "directory for the log file (default: a new one under /dev/shm)")
    Path work;
    @Option(names = "--log-device", description = "put the log on this device-DAX device, e.g. /dev/dax0.0 "
            + "($ERDA_VM_DEVDAX in scripts/softroce-vm --pmem-mode devdax); tcp and verbs only (default: a file in --work)")
    Path logDevice;

    private final PrintStream out = System.out;
    private long lastProgress = System.nanoTime();

    private RemoteLog openLog(Path dir, LogLayout layout) throws IOException, InterruptedException {
        try {
            return RemoteLog.open(fabric, dir, layout, Map.of(), logDevice);
        } catch (IllegalArgumentException e) {
            if (logDevice == null) {
                throw e;
            }
            throw new ParameterException(spec.commandLine(), "--log-device " + logDevice + ": " + e.getMessage());
        }
    }

    public static void main(String[] args) {
        System.exit(new CommandLine(new RemoteLogBench()).execute(args));
    }

    @Spec
    CommandSpec spec;

    @Override
    public Integer call() throws IOException, InterruptedException {
        List<PmConfiguration> configs;
        List<Method> ms;
        int warm = warmup != null ? warmup : records / 10;
        LogLayout layout;
        Transport carried;
        try {
            carried = Transport.parse(transport);
            configs = configurations == null ? PmConfiguration.all()
                    : configurations.stream().map(PmConfiguration::parse).toList();
            ms = methods == null ? List.of(Method.values()) : methods.stream().map(Method::parse).toList();
            if (!Fabric.schemes().contains(fabric)) {
                throw new IllegalArgumentException("--fabric " + fabric + " is none of " + Fabric.schemes());
            }
            if (records <= 0 || warm < 0 || failures < 0) {
                throw new IllegalArgumentException("--records " + records + " must be positive, --warmup " + warm
                        + " and --failures " + failures + " not negative");
            }
            layout = new LogLayout(recordSize, Math.max(warm + records, 4 * PowerFailures.MAX_EVENTS_BETWEEN_FAILURES));
        } catch (IllegalArgumentException e) {
            throw new ParameterException(spec.commandLine(), e.getMessage());
        }
        Path dir = work != null ? Files.createDirectories(work) : Files.createTempDirectory(
                Files.isDirectory(Path.of("/dev/shm")) ? Path.of("/dev/shm") : Path.of(System.getProperty("java.io.tmpdir")),
                "remotelog");
        Map<Method, AppendTiming.Result> timing = new EnumMap<>(Method.class);
        List<Cell> cells = new ArrayList<>();
        try (RemoteLog log = openLog(dir, layout)) {
            out.printf("remotelog on %s: %d-byte records, %d timed appends per method after %d warm-up, "
                    + "%d power failures per cell, seed %d, completions read as %s%n", log.device(), recordSize,
                    records, warm, failures, seed, carried == Transport.IWARP ? "iWARP's (sent)"
                            : "InfiniBand's (received)");
            out.println(log.operations());
            out.println(log.logMapping());
            for (Method m : ms) {
                Method runs = log.appender().substitute(m);
                if (runs != m) {
                    out.printf("note: %s runs as %s on %s (no ATOMIC_WRITE)%n", m.label(), runs.label(), fabric);
                }
            }
            // every method warms up before any is timed, so the first ones timed do not pay for the JIT's work
            for (Method m : ms) {
                if (warm > 0) {
                    AppendTiming.run(log, m, 0, warm);
                }
            }
            for (Method m : ms) {
                timing.put(m, AppendTiming.run(log, m, warm, records));
                progress("timed " + timing.size() + "/" + ms.size() + " methods");
            }
            int total = configs.size() * ms.size();
            long cellSeed = seed;
            for (PmConfiguration c : configs) {
                for (Method m : ms) {
                    PowerFailures.Outcome o = PowerFailures.run(log, c, carried, m, failures, cellSeed++);
                    cells.add(new Cell(c, m, carried, Taxonomy.verdict(c, m, carried), o));
                    progress("power failures: " + cells.size() + "/" + total + " cells");
                }
            }
        }
        if (work == null) {
            deleteTree(dir); // the log, and shm's rings and sockets: a run leaves nothing behind in /dev/shm
        }
        printTable(cells, timing);
        printLegend(ms);
        printRatios(timing);
        return printSummary(cells);
    }

    /** One configuration × method: the paper's verdict and what the power failures showed. */
    record Cell(PmConfiguration configuration, Method method, Transport transport, Verdict verdict,
                PowerFailures.Outcome outcome) {
        boolean prescribed() {
            return Taxonomy.prescribed(configuration, method.update(), method.primary(), transport) == method;
        }

        String shown() {
            if (verdict == Verdict.CORRECT) {
                return outcome.lost() == 0 ? "correct, 0 lost" : "CORRECT CELL LOST APPENDS";
            }
            return outcome.lost() > 0 ? "incorrect, shown" : "incorrect, not observed";
        }
    }

    private static void deleteTree(Path dir) throws IOException {
        try (var paths = Files.walk(dir)) {
            for (Path p : paths.sorted(Comparator.reverseOrder()).toList()) {
                Files.deleteIfExists(p);
            }
        }
    }

    private void progress(String what) {
        if (System.nanoTime() - lastProgress > 5_000_000_000L) {
            System.err.println("remotelog: " + what);
            lastProgress = System.nanoTime();
        }
    }

    private void printTable(List<Cell> cells, Map<Method, AppendTiming.Result> timing) {
        out.println();
        out.printf("%-20s %-29s %-9s %8s %8s %8s %9s %5s %6s %5s %5s %8s  %s%n", "configuration", "method (* paper's)",
                "paper", "mean-us", "p50-us", "p99-us", "rsp-cpu", "fails", "acked", "missed", "torn", "survived",
                "shown");
        PmConfiguration previous = null;
        for (Cell cell : cells) {
            if (previous != null && !previous.equals(cell.configuration())) {
                out.println();
            }
            previous = cell.configuration();
            AppendTiming.Result t = timing.get(cell.method());
            PowerFailures.Outcome o = cell.outcome();
            out.printf(Locale.ROOT, "%-20s %-29s %-9s %8.2f %8.2f %8.2f %9.2f %5d %6d %5d %5d %8s  %s%n",
                    cell.configuration().label(), cell.method().label() + (cell.prescribed() ? " *" : ""),
                    cell.verdict() == Verdict.CORRECT ? "correct" : "incorrect", t.meanMicros(), t.p50Micros(),
                    t.p99Micros(), t.serverCpuMicros(), o.failures(), o.acknowledged(), o.missing(), o.torn(),
                    o.lost() == 0 ? "yes" : "no", cell.shown());
        }
    }

    private void printLegend(List<Method> ms) {
        out.println();
        out.println("methods (Rq requester, Rsp responder; flush = the responder's cache-line write-back, Flush = RDMA FLUSH):");
        for (Method m : ms) {
            out.printf("  %-29s %s%s%n", m.label(), m.notation(), m.alsoKnownAs().isEmpty() ? "" : "  [" + m.alsoKnownAs() + "]");
        }
    }

    /**
     * The paper's findings (§4.3, §4.4) as ratios of median append latency in this run: the median, because on a
     * shared host the mean follows the scheduler's outliers more than the method.
     */
    private void printRatios(Map<Method, AppendTiming.Result> timing) {
        out.println();
        out.println("the paper's findings, as ratios of median (p50) append latency in this run:");
        for (Finding f : FINDINGS) {
            AppendTiming.Result a = timing.get(f.method());
            AppendTiming.Result b = timing.get(f.against());
            if (a != null && b != null) {
                out.printf(Locale.ROOT, "  %-95s %5.2f  (%.2f / %.2f us; %s)%n", f.what(), a.p50Micros() / b.p50Micros(),
                        a.p50Micros(), b.p50Micros(), f.paper());
            }
        }
    }

    /** One of the paper's findings: {@code method}'s latency over {@code against}'s, and what the paper measured. */
    record Finding(String what, Method method, Method against, String paper) {
    }

    static final List<Finding> FINDINGS = List.of(
            new Finding("one-sided vs message passing (MHP, singleton): write-flush / send-copy",
                    Method.WRITE_FLUSH, Method.SEND_COPY, "paper: one-sided up to 50% faster"),
            new Finding("one-sided vs message passing (WSP, compound): write-write / send-ab-copy",
                    Method.WRITE_WRITE, Method.SEND_AB_COPY, "paper: up to 30% faster"),
            new Finding("WSP without Flush vs MHP: write / write-flush",
                    Method.WRITE, Method.WRITE_FLUSH, "paper: 1.6 us, 25% below MHP"),
            new Finding("SEND(a,b) vs WRITE+WRITE in DMP with DDIO: send-ab-copy-flush / write-send-flush-twice",
                    Method.SEND_AB_COPY_FLUSH, Method.WRITE_SEND_FLUSH_TWICE, "paper: two round trips cost over 2x"),
            new Finding("PM receive buffers (MHP): send-flush / send-copy",
                    Method.SEND_FLUSH, Method.SEND_COPY, "paper: Send becomes one-sided"),
            new Finding("non-posted WRITE vs waiting for the Flush (DMP, no DDIO): write-flush-atomic-flush / "
                    + "write-flush-wait-twice", Method.WRITE_FLUSH_ATOMIC_FLUSH, Method.WRITE_FLUSH_WAIT_TWICE,
                    "paper: pipelining helps"));

    private int printSummary(List<Cell> cells) {
        long correct = cells.stream().filter(c -> c.verdict() == Verdict.CORRECT && c.outcome().lost() == 0).count();
        long violations = cells.stream().filter(c -> c.verdict() == Verdict.CORRECT && c.outcome().lost() > 0).count();
        long shown = cells.stream().filter(c -> c.verdict() == Verdict.INCORRECT && c.outcome().lost() > 0).count();
        long unobserved = cells.stream().filter(c -> c.verdict() == Verdict.INCORRECT && c.outcome().lost() == 0)
                .count();
        out.println();
        if (unobserved > 0) {
            out.println("incorrect but no loss observed (the unsafe window was not hit, or cannot be on this fabric):");
            cells.stream().filter(c -> c.verdict() == Verdict.INCORRECT && c.outcome().lost() == 0).forEach(c ->
                    out.printf("  %-20s %-29s %s%n", c.configuration().label(), c.method().label(),
                            Taxonomy.reason(c.configuration(), c.method(), c.transport())));
        }
        out.printf("remotelog scenarios %d, correct %d (0 lost), incorrect shown %d, unobservable %d%s%n", cells.size(),
                correct, shown, unobserved, violations > 0 ? ", CORRECT CELLS LOSING APPENDS " + violations : "");
        return violations > 0 ? 1 : 0;
    }
}
