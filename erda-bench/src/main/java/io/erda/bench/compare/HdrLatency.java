package io.erda.bench.compare;

import java.io.IOException;
import java.io.PrintStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.HdrHistogram.EncodableHistogram;
import org.HdrHistogram.Histogram;
import org.HdrHistogram.HistogramIterationValue;
import org.HdrHistogram.HistogramLogReader;
import org.HdrHistogram.HistogramLogWriter;

/**
 * The full latency histograms YCSB writes with {@code hdrhistogram.fileoutput=true}: one HdrHistogram log per
 * operation type and process ({@code PATH_PREFIX + NAME + ".hdr"}, NAME e.g. {@code READ} or, from the intended start
 * time, {@code Intended-READ}), one interval every status interval, values in µs. A run's histogram is the sum of its
 * intervals; several client processes' histograms are added, never their means averaged.
 */
final class HdrLatency {

    /** Percentile levels the plots draw between, per halving of the distance to 100% (as HdrHistogram's plotter). */
    private static final int TICKS_PER_HALF_DISTANCE = 5;

    private HdrLatency() {
    }

    /** The figures of {@code h}: operations, mean, median, p99, p99.9 and max, in µs. */
    static LatencyFigures figures(Histogram h) {
        return new LatencyFigures(h.getTotalCount(), h.getMean(), h.getValueAtPercentile(50), h.getValueAtPercentile(99),
            h.getValueAtPercentile(99.9), h.getMaxValue());
    }

    /** One point of a percentile curve: {@code 1 / (1 - percentile)} (the "nines" axis) and the latency there in µs. */
    record Point(double inverseTail, double latencyUs) { }

    /** The sum of every interval of the log in {@code file}. */
    static Histogram read(Path file) throws IOException {
        Histogram total = new Histogram(3);
        try (HistogramLogReader reader = new HistogramLogReader(file.toFile())) {
            for (EncodableHistogram h; (h = reader.nextIntervalHistogram()) != null; ) {
                if (!(h instanceof Histogram interval)) {
                    throw new IOException(file + " holds a " + h.getClass().getSimpleName() + ", not an integer histogram");
                }
                total.add(interval);
            }
        } catch (RuntimeException e) {
            throw new IOException("cannot read the HdrHistogram log " + file + ": " + e, e);
        }
        return total;
    }

    /** The sum of the logs in {@code files} (several client processes of one run). */
    static Histogram sum(List<Path> files) throws IOException {
        Histogram total = new Histogram(3);
        for (Path f : files) {
            total.add(read(f));
        }
        return total;
    }

    /** Writes {@code h} as an HdrHistogram log of one interval, readable by {@link #read} and HdrHistogram's tools. */
    static void write(Histogram h, Path file, String comment) throws IOException {
        Files.createDirectories(file.toAbsolutePath().getParent());
        try (PrintStream out = new PrintStream(Files.newOutputStream(file), false, java.nio.charset.StandardCharsets.US_ASCII)) {
            HistogramLogWriter w = new HistogramLogWriter(out);
            w.outputComment(comment);
            w.outputLogFormatVersion();
            w.outputLegend();
            w.outputIntervalHistogram(0, 0, h, 1.0);
        }
        if (!Files.isRegularFile(file)) {
            throw new IOException("writing " + file + " failed");
        }
    }

    /**
     * The percentile curve of {@code h}: points below the percentile of the last operation ({@code 1 - 1/count}),
     * then the maximum there; empty for an empty histogram.
     */
    static List<Point> curve(Histogram h) {
        List<Point> points = new ArrayList<>();
        long n = h.getTotalCount();
        if (n == 0) {
            return points;
        }
        for (HistogramIterationValue v : h.percentiles(TICKS_PER_HALF_DISTANCE)) {
            double p = v.getPercentileLevelIteratedTo() / 100.0;
            if (p >= 1.0 || 1.0 / (1.0 - p) >= n) {
                break;
            }
            points.add(new Point(1.0 / (1.0 - p), v.getValueIteratedTo()));
        }
        points.add(new Point(n, h.getMaxValue()));
        return points;
    }
}
