package io.erda.bench.ycsb;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Properties;
import java.util.concurrent.atomic.AtomicLong;
import site.ycsb.Client;
import site.ycsb.DB;
import site.ycsb.Workload;
import site.ycsb.measurements.Measurements;

/**
 * {@code site.ycsb.Client} with a warm-up that no figure sees. YCSB 0.17.0 has none: its measurements
 * ({@code Measurements}, one process-wide HdrHistogram per operation, no reset), its run time and so its throughput
 * start with the first operation of a cold JVM. This main first runs the same workload in the same JVM for the
 * warm-up time, through instances of the binding that are not wrapped in YCSB's {@code DBWrapper} (the wrapper is
 * what measures) and are not given the binding's own histogram path ({@link OperationLatency}), then hands the
 * unchanged arguments to {@code Client.main}: the JIT, the class loading, the client library's first connection are
 * done, and every figure covers the measured phase only.
 *
 * <p>Usage: {@code WarmedYcsbClient WARMUP_SECONDS GATE YCSB_ARGS...}, where YCSB_ARGS may only be {@code -P FILE}
 * and {@code -p NAME=VALUE} (what YCSB's own flags set, e.g. {@code -p threadcount=2}, {@code -p dotransactions=true}),
 * so that the warm-up reads the very properties YCSB will. A load ({@code dotransactions=false}) is not warmed up.
 * After the warm-up it prints {@link #WARMED_UP} on stderr; with GATE {@code true} it then waits for a line on stdin
 * before the measured phase, so a driver can start several client processes' measured phases together.
 */
public final class WarmedYcsbClient {

    /** Printed on stderr when the warm-up is over (also with no warm-up): the binding's lines before it are the warm-up's. */
    public static final String WARMED_UP = "erda-ycsb: warmed up";

    private WarmedYcsbClient() {
    }

    public static void main(String[] args) throws Exception {
        if (args.length < 2) {
            System.err.println("usage: WarmedYcsbClient WARMUP_SECONDS GATE(true|false) [-P FILE | -p NAME=VALUE]...");
            System.exit(2);
        }
        double warmupSeconds = Double.parseDouble(args[0]);
        boolean gate = Boolean.parseBoolean(args[1]);
        String[] ycsbArgs = Arrays.copyOfRange(args, 2, args.length);
        Properties props = properties(ycsbArgs);
        long ops = 0;
        if (warmupSeconds > 0 && Boolean.parseBoolean(props.getProperty("dotransactions", "true"))) {
            ops = warmUp(props, (long) (warmupSeconds * 1e9));
        }
        System.err.println(WARMED_UP + " (" + ops + " operations in " + warmupSeconds + " s, not measured)");
        if (gate) {
            BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
            if (in.readLine() == null) {
                System.err.println("erda-ycsb: stdin closed before the measured phase was released");
                System.exit(3);
            }
        }
        Client.main(ycsbArgs);
    }

    /** The properties YCSB's Client builds from {@code -P} files and {@code -p} settings (the latter win). */
    static Properties properties(String[] args) throws IOException {
        Properties files = new Properties();
        Properties settings = new Properties();
        for (int i = 0; i < args.length; i += 2) {
            if (i + 1 >= args.length || !(args[i].equals("-P") || args[i].equals("-p"))) {
                throw new IllegalArgumentException("YCSB argument " + args[i] + " is not -P FILE or -p NAME=VALUE"
                    + " (the warm-up must read exactly what YCSB reads)");
            }
            if (args[i].equals("-P")) {
                try (InputStream in = Files.newInputStream(Path.of(args[i + 1]))) {
                    files.load(in);
                }
            } else {
                int eq = args[i + 1].indexOf('=');
                if (eq < 0) {
                    throw new IllegalArgumentException("-p " + args[i + 1] + " is not NAME=VALUE");
                }
                settings.setProperty(args[i + 1].substring(0, eq), args[i + 1].substring(eq + 1));
            }
        }
        files.putAll(settings);
        return files;
    }

    /**
     * Runs the workload's transactions for {@code nanos} on {@code threadcount} threads, each with a binding instance
     * of its own, closed loop; returns the operations done. Nothing reaches YCSB's measurements: they are set up
     * with the run's properties here (the workload asks for them when constructed) but only the wrapper records.
     */
    private static long warmUp(Properties measured, long nanos) throws Exception {
        Measurements.setProperties(measured);
        Properties props = new Properties();
        props.putAll(measured);
        props.remove(OperationLatency.PATH_PROPERTY); // the binding's own histograms record nothing of the warm-up
        Workload workload = Class.forName(props.getProperty("workload")).asSubclass(Workload.class)
            .getDeclaredConstructor().newInstance();
        workload.init(props);
        int threads = Integer.parseInt(props.getProperty("threadcount", "1"));
        String dbClass = props.getProperty("db", "site.ycsb.BasicDB");
        long deadline = System.nanoTime() + nanos;
        AtomicLong done = new AtomicLong();
        List<Throwable> failures = new ArrayList<>();
        List<Thread> running = new ArrayList<>();
        for (int t = 0; t < threads; t++) {
            int id = t;
            running.add(Thread.ofPlatform().name("ycsb-warmup-" + t).start(() -> {
                try {
                    DB db = Class.forName(dbClass).asSubclass(DB.class).getDeclaredConstructor().newInstance();
                    db.setProperties(props);
                    db.init();
                    Object state = workload.initThread(props, id, threads);
                    long n = 0;
                    while (System.nanoTime() < deadline && workload.doTransaction(db, state)) {
                        n++;
                    }
                    done.addAndGet(n);
                    db.cleanup();
                } catch (Exception | Error e) {
                    synchronized (failures) {
                        failures.add(e);
                    }
                }
            }));
        }
        for (Thread t : running) {
            t.join();
        }
        workload.cleanup();
        if (!failures.isEmpty()) {
            System.err.println("erda-ycsb: warm-up failed: " + failures.getFirst());
            System.exit(4);
        }
        return done.get();
    }
}
