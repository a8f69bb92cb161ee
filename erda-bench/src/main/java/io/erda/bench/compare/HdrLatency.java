package io.erda.bench.compare;

import io.erda.bench.ycsb.OperationLatency;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.HdrHistogram.EncodableHistogram;
import org.HdrHistogram.Histogram;
import org.HdrHistogram.HistogramIterationValue;
import org.HdrHistogram.HistogramLogReader;

/**
 * The full latency histograms of a run: one HdrHistogram log per operation type and client process
 * ({@code PATH_PREFIX + NAME + ".hdr"}, NAME e.g. {@code READ} or, from the intended start time, {@code Intended-READ}),
 * values in nanoseconds, as the YCSB binding writes them ({@code io.erda.bench.ycsb.OperationLatency}; YCSB's own
 * histograms hold whole µs and are not used). A run's histogram is the sum of a log's intervals; several client
 * processes' histograms are added, never their means averaged. Figures and curves are given in µs.
 */
final class HdrLatency {

    /** Percentile levels the plots draw between, per halving of the distance to 100% (as HdrHistogram's plotter). */
    private static final int TICKS_PER_HALF_DISTANCE = 5;

    private HdrLatency() {
    }

    private static final double NANOS_PER_MICRO = 1000.0;

    /** The figures of {@code h} (values in ns): operations, mean, median, p99, p99.9 and max, in µs. */
    static LatencyFigures figures(Histogram h) {
        return new LatencyFigures(h.getTotalCount(), h.getMean() / NANOS_PER_MICRO,
            h.getValueAtPercentile(50) / NANOS_PER_MICRO, h.getValueAtPercentile(99) / NANOS_PER_MICRO,
            h.getValueAtPercentile(99.9) / NANOS_PER_MICRO, h.getMaxValue() / NANOS_PER_MICRO);
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
        OperationLatency.write(h, file, comment);
    }

    /**
     * The percentile curve of {@code h} (values in ns), in µs: points below the percentile of the last operation ({@code 1 - 1/count}),
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
            points.add(new Point(1.0 / (1.0 - p), v.getValueIteratedTo() / NANOS_PER_MICRO));
        }
        points.add(new Point(n, h.getMaxValue() / NANOS_PER_MICRO));
        return points;
    }
}
