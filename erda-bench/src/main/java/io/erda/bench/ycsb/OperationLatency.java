package io.erda.bench.ycsb;

import java.io.IOException;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.EnumMap;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Properties;
import org.HdrHistogram.Histogram;
import org.HdrHistogram.HistogramLogWriter;
import site.ycsb.measurements.Measurements;

/**
 * The binding's own latency histograms, in nanoseconds. YCSB 0.17.0's {@code DBWrapper} records
 * {@code (end - start) / 1000} as an int: every latency truncated to whole µs. On a fabric where a GET takes 0.3 to
 * 1.4 µs that makes most GETs 0, and every mean low by about half a µs (on average the truncation drops half of the
 * last µs). So the binding times each operation itself, over the same span as the wrapper (the call into the binding,
 * its key and record encoding included), and records the nanoseconds.
 *
 * <p>An instance belongs to one binding instance and so to one YCSB thread; it records into histograms of its own.
 * At {@link #publish} (the binding's cleanup) they are added to the process's, and the process's sums are written,
 * one HdrHistogram log of one interval per name: {@code PREFIX + NAME + ".hdr"}, NAME {@code READ}, {@code UPDATE},
 * {@code INSERT}, {@code DELETE} and, when YCSB measures the intended start ({@code measurement.interval} {@code both}
 * or {@code intended}: the open loop), {@code Intended-READ} and so on, from YCSB's intended start time. Only
 * operations that returned OK are recorded (a run with any other result is rejected as a whole).
 *
 * <p>PREFIX is the YCSB property {@value #PATH_PROPERTY}; without it nothing is recorded, which is how
 * {@link WarmedYcsbClient} keeps its warm-up's operations out.
 */
public final class OperationLatency {

    /** The YCSB property naming the histogram files' path prefix. */
    public static final String PATH_PROPERTY = "latency.hdr.path";

    /** The operations a binding serves, named as YCSB names their measurements. */
    enum Op { READ, UPDATE, INSERT, DELETE }

    /** Every name's sum over the process's published instances; guarded by itself. */
    private static final Map<String, Histogram> PROCESS = new LinkedHashMap<>();

    private final Path prefix;
    private final boolean intended;
    private final Map<Op, Histogram> actual = new EnumMap<>(Op.class);
    private final Map<Op, Histogram> fromIntended = new EnumMap<>(Op.class);

    private OperationLatency(Path prefix, boolean intended) {
        this.prefix = prefix;
        this.intended = intended;
    }

    /** The recorder the binding's properties ask for: none without {@value #PATH_PROPERTY}. */
    static OperationLatency of(Properties p) {
        String path = p.getProperty(PATH_PROPERTY);
        String interval = p.getProperty("measurement.interval", "op");
        return new OperationLatency(path == null ? null : Path.of(path),
            path != null && (interval.equals("both") || interval.equals("intended")));
    }

    /** YCSB's intended start of the operation about to begin (open loop), or 0 if not measured. */
    long intendedStart() {
        return intended ? Measurements.getMeasurements().getIntendedtartTimeNs() : 0;
    }

    /** Records an operation that began at {@code start} ({@code System.nanoTime()}) and ended now. */
    void record(Op op, long intendedStart, long start) {
        if (prefix == null) {
            return;
        }
        long end = System.nanoTime();
        actual.computeIfAbsent(op, o -> new Histogram(3)).recordValue(Math.max(0, end - start));
        if (intended) {
            fromIntended.computeIfAbsent(op, o -> new Histogram(3)).recordValue(Math.max(0, end - intendedStart));
        }
    }

    /**
     * Adds this instance's histograms to the process's and writes the process's sums; after the last thread's
     * cleanup the files hold every measured operation of the process.
     */
    void publish() throws IOException {
        if (prefix == null) {
            return;
        }
        synchronized (PROCESS) {
            actual.forEach((op, h) -> PROCESS.computeIfAbsent(op.name(), n -> new Histogram(3)).add(h));
            fromIntended.forEach((op, h) -> PROCESS.computeIfAbsent("Intended-" + op.name(), n -> new Histogram(3)).add(h));
            actual.clear();
            fromIntended.clear();
            for (Map.Entry<String, Histogram> e : PROCESS.entrySet()) {
                String name = e.getKey();
                write(e.getValue(), Path.of(prefix + name + ".hdr"), "[" + name + " latency in ns, from "
                    + (name.startsWith("Intended-") ? "the intended" : "the actual") + " start, timed by the binding]");
            }
        }
    }

    /** Writes {@code h} as an HdrHistogram log of one interval, readable by HdrHistogram's log reader and tools. */
    public static void write(Histogram h, Path file, String comment) throws IOException {
        Files.createDirectories(file.toAbsolutePath().getParent());
        try (PrintStream out = new PrintStream(Files.newOutputStream(file), false, StandardCharsets.US_ASCII)) {
            HistogramLogWriter w = new HistogramLogWriter(out);
            w.outputComment(comment);
            w.outputLogFormatVersion();
            w.outputLegend();
            w.outputIntervalHistogram(0, 0, h, 1.0);
            if (out.checkError()) {
                throw new IOException("cannot write the latency histogram " + file);
            }
        }
    }
}
