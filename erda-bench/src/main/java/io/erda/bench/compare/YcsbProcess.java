package io.erda.bench.compare;

import io.erda.bench.backend.ServerProcess;
import io.erda.bench.ycsb.ErdaYcsbDb;
import io.erda.bench.ycsb.OperationLatency;
import io.erda.bench.ycsb.WarmedYcsbClient;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.io.PrintWriter;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * One YCSB run as JVMs of its own (YCSB ends with System.exit): one or several client processes
 * ({@code io.erda.bench.ycsb.WarmedYcsbClient}, i.e. {@code site.ycsb.Client} after a warm-up no figure sees), each
 * with the run's threads. Each process's stdout (the measurements) and stderr (status every two seconds, errors) are
 * saved as {@code NAME.out} and {@code NAME.err}, its latency histograms as {@code NAME-OP.hdr} (the binding's, in ns:
 * {@code io.erda.bench.ycsb.OperationLatency}); NAME is the run's label, with {@code -cI} for client I of several. Status lines
 * are forwarded as progress while it runs.
 *
 * <p>Several processes, or a warm-up, go through a gate: each process warms up, then waits; once all have, the
 * driver's {@link Hooks#warmedUp} runs and all are released together, so their measured windows coincide.
 */
final class YcsbProcess {

    /** "2026-11-21 22:37:51:008 10 sec: 17684 operations; 1234.5 current ops/sec; [READ: ...]". */
    private static final Pattern STATUS = Pattern.compile("\\d+ sec: \\d+ operations;[^\\[]*");

    /** A YCSB run that did not give usable measurements, with why. */
    static final class FailedRun extends IOException {
        FailedRun(String message) {
            super(message);
        }
    }

    /**
     * What the driver runs at a run's turns, each at most once, on a thread reading a process's stderr: when every
     * process has warmed up (before any is released into its measured phase), when every thread of every process has
     * connected for the measured phase, and when the first thread is about to disconnect.
     */
    record Hooks(Runnable warmedUp, Runnable allConnected, Runnable firstClosing) {
        static final Hooks NONE = new Hooks(() -> { }, () -> { }, () -> { });
    }

    private YcsbProcess() {
    }

    /** The label of client {@code index} (from 0) of {@code clients}: the run's own label when it is the only one. */
    static String clientLabel(String label, int index, int clients) {
        return clients == 1 ? label : label + "-c" + (index + 1);
    }

    /**
     * Runs YCSB in one process with no warm-up (a load) and returns its parsed output; throws {@link FailedRun} as
     * {@link #run(String, boolean, Path, Map, int, int, double, Duration, long, Path, PrintStream, Hooks)} does.
     */
    static YcsbOutput run(String label, boolean load, Path workload, Map<String, String> properties, int threads,
                          Duration timeout, long minOk, Path rawDir, PrintStream progress) throws IOException {
        return run(label, load, workload, properties, threads, 1, 0, timeout, minOk, rawDir, progress, Hooks.NONE).getFirst();
    }

    /**
     * Runs YCSB as {@code clients} processes of {@code threads} threads, each warmed up for {@code warmupSeconds}
     * first, and returns their parsed outputs in client order; throws {@link FailedRun} naming the reason if any
     * exits badly, times out, reports failed operations, prints an exception, or completes fewer than {@code minOk}
     * operations. A process that fails ends the others.
     */
    static List<YcsbOutput> run(String label, boolean load, Path workload, Map<String, String> properties, int threads,
                                int clients, double warmupSeconds, Duration timeout, long minOk, Path rawDir,
                                PrintStream progress, Hooks hooks) throws IOException {
        Files.createDirectories(rawDir);
        boolean gate = clients > 1 || warmupSeconds > 0;
        List<Process> processes = new ArrayList<>();
        List<Path> outs = new ArrayList<>();
        List<Path> errs = new ArrayList<>();
        try {
            for (int i = 0; i < clients; i++) {
                String name = clientLabel(label, i, clients);
                List<String> command = new ArrayList<>(List.of(ServerProcess.javaExecutable(), "--enable-native-access=ALL-UNNAMED",
                    "-Djava.awt.headless=true", "-cp", System.getProperty("java.class.path"), WarmedYcsbClient.class.getName(),
                    Double.toString(warmupSeconds), Boolean.toString(gate), "-P", workload.toString()));
                Map<String, String> p = new LinkedHashMap<>();
                p.put("db", "io.erda.bench.ycsb.ErdaYcsbDb");
                p.put("dotransactions", Boolean.toString(!load));
                p.put("threadcount", Integer.toString(threads));
                p.put("status", "true");
                p.put("status.interval", "2");
                // the binding's own histograms, in ns (YCSB's are truncated to whole µs; it writes none)
                p.put(OperationLatency.PATH_PROPERTY, rawDir.toAbsolutePath() + "/" + name + "-");
                p.putAll(properties);
                p.forEach((k, v) -> command.addAll(List.of("-p", k + "=" + v)));
                outs.add(rawDir.resolve(name + ".out"));
                errs.add(rawDir.resolve(name + ".err"));
                processes.add(new ProcessBuilder(command).redirectOutput(outs.getLast().toFile()).start());
            }
        } catch (IOException | RuntimeException e) {
            processes.forEach(Process::destroyForcibly);
            throw e;
        }
        Phases phases = new Phases(processes, threads, gate, hooks);
        List<Thread> pumps = new ArrayList<>();
        for (int i = 0; i < clients; i++) {
            pumps.add(pump(clientLabel(label, i, clients), processes.get(i), errs.get(i), phases, progress));
        }
        awaitAll(label, processes, timeout, errs);
        try {
            for (Thread pump : pumps) {
                pump.join(5000);
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new FailedRun("interrupted while YCSB " + label + " ran");
        }
        List<YcsbOutput> parsed = new ArrayList<>();
        List<String> why = new ArrayList<>();
        synchronized (phases.errors) {
            why.addAll(phases.errors.stream().limit(3).toList());
        }
        for (int i = 0; i < clients; i++) {
            YcsbOutput o = YcsbOutput.parse(Files.readString(outs.get(i), StandardCharsets.UTF_8));
            parsed.add(o);
            String who = clients == 1 ? "" : "client " + (i + 1) + ": ";
            if (processes.get(i).exitValue() != 0) {
                why.add(who + "exit status " + processes.get(i).exitValue());
            }
            o.failures().forEach(f -> why.add(who + f));
        }
        long ok = parsed.stream().mapToLong(YcsbOutput::okOperations).sum();
        if (why.isEmpty() && ok < minOk) {
            why.add(ok + " operations completed, expected at least " + minOk);
        }
        if (!why.isEmpty()) {
            throw new FailedRun("YCSB " + label + " failed: " + String.join("; ", why) + " (raw output: " + outs.getFirst()
                + ", " + errs.getFirst() + (clients > 1 ? ", ..." : "") + ")");
        }
        return parsed;
    }

    /** The turns of a run that all its processes' stderr readers share. */
    private static final class Phases {
        final List<Process> processes;
        final int threads;
        final boolean gate;
        final Hooks hooks;
        final List<String> errors = new ArrayList<>();
        private int warmed;
        private int connected;
        private boolean closing;

        Phases(List<Process> processes, int threads, boolean gate, Hooks hooks) {
            this.processes = processes;
            this.threads = threads;
            this.gate = gate;
            this.hooks = hooks;
        }

        /** A process has warmed up; the last one runs the hook and releases them all. */
        void warmedUp() {
            synchronized (this) {
                if (++warmed < processes.size()) {
                    return;
                }
            }
            try {
                hooks.warmedUp().run();
            } catch (RuntimeException e) {
                error("after the warm-up: " + e.getMessage());
                processes.forEach(Process::destroyForcibly);
                return;
            }
            if (gate) {
                for (Process p : processes) {
                    try {
                        p.getOutputStream().write('\n');
                        p.getOutputStream().flush();
                    } catch (IOException gone) {
                        // It exited; its status says why.
                    }
                }
            }
        }

        void connected() {
            boolean all;
            synchronized (this) {
                all = ++connected == threads * processes.size();
            }
            if (all) {
                hooks.allConnected().run();
            }
        }

        void closing() {
            synchronized (this) {
                if (closing) {
                    return;
                }
                closing = true;
            }
            hooks.firstClosing().run();
        }

        void error(String line) {
            synchronized (errors) {
                errors.add(line);
            }
        }
    }

    /** Reads a process's stderr into {@code err}: its turns, its status lines as progress, its errors. */
    private static Thread pump(String name, Process p, Path err, Phases phases, PrintStream progress) {
        return Thread.ofPlatform().daemon().name("ycsb-" + name).start(() -> {
            try (BufferedReader in = new BufferedReader(new InputStreamReader(p.getErrorStream(), StandardCharsets.UTF_8));
                 PrintWriter saved = new PrintWriter(Files.newBufferedWriter(err, StandardCharsets.UTF_8), true)) {
                // The warm-up's connections print CONNECTED and CLOSING too: only those after WARMED_UP are the run's.
                boolean measuring = false;
                for (String line; (line = in.readLine()) != null; ) {
                    saved.println(line);
                    Matcher m = STATUS.matcher(line);
                    if (line.startsWith(WarmedYcsbClient.WARMED_UP)) {
                        measuring = true;
                        phases.warmedUp();
                    } else if (line.equals(ErdaYcsbDb.CONNECTED)) {
                        if (measuring) {
                            phases.connected();
                        }
                    } else if (line.equals(ErdaYcsbDb.CLOSING)) {
                        if (measuring) {
                            phases.closing();
                        }
                    } else if (m.find()) {
                        progress.println("  " + name + ": " + m.group().replaceAll("; est completion in .*", "").strip().replaceAll(";$", ""));
                    } else if (line.startsWith("erda-ycsb:") || line.contains("Exception") || line.startsWith("Error")) {
                        phases.error(line);
                        progress.println("  " + name + ": " + line);
                    }
                }
            } catch (IOException ignored) {
                // The process went away; its exit status tells the rest.
            }
        });
    }

    /** Waits for every process; ends them all once one fails or the time is up. */
    static void awaitAll(String label, List<Process> processes, Duration timeout, List<Path> errs) throws FailedRun {
        long deadline = System.nanoTime() + timeout.toNanos();
        try {
            while (true) {
                Process alive = null; // the one to wait on next
                boolean failed = false;
                for (Process p : processes) {
                    if (!p.isAlive()) {
                        failed |= p.exitValue() != 0;
                    } else if (alive == null) {
                        alive = p;
                    }
                }
                if (alive == null) {
                    return;
                }
                if (failed) {
                    for (Process p : processes) {
                        p.destroyForcibly().waitFor(10, TimeUnit.SECONDS);
                    }
                    return;
                }
                if (System.nanoTime() > deadline) {
                    for (Process p : processes) {
                        p.destroyForcibly().waitFor(10, TimeUnit.SECONDS);
                    }
                    throw new FailedRun("YCSB " + label + " did not finish within " + timeout.toSeconds() + " s (see " + errs.getFirst() + ")");
                }
                // the one seen alive above, even if it has ended since: waitFor then returns at once (a second look for
                // "the first alive process" failed a whole comparison when the last one exited in between)
                alive.waitFor(50, TimeUnit.MILLISECONDS);
            }
        } catch (InterruptedException e) {
            processes.forEach(Process::destroyForcibly);
            Thread.currentThread().interrupt();
            throw new FailedRun("interrupted while YCSB " + label + " ran");
        }
    }
}
