package io.erda.bench.compare;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.IOException;
import java.io.PrintStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.IdentityHashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.HdrHistogram.Histogram;
import org.HdrHistogram.HistogramLogWriter;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

class HdrLatencyTest {

    /** A log of several intervals (HdrHistogram's format; the binding writes one interval), values in ns. */
    static void log(Path file, Histogram... intervals) throws IOException {
        try (PrintStream out = new PrintStream(Files.newOutputStream(file))) {
            HistogramLogWriter w = new HistogramLogWriter(out);
            w.outputComment("[READ]");
            w.outputLogFormatVersion();
            w.outputStartTime(System.currentTimeMillis());
            w.outputLegend();
            for (Histogram h : intervals) {
                w.outputIntervalHistogram(h);
            }
        }
    }

    static Histogram of(long... values) {
        Histogram h = new Histogram(3);
        for (long v : values) {
            h.recordValue(v);
        }
        return h;
    }

    @Test
    void aRunIsTheSumOfItsIntervalsAndProcessesAreAddedNotAveraged(@TempDir Path dir) throws IOException {
        Path c1 = dir.resolve("run-c1-READ.hdr");
        Path c2 = dir.resolve("run-c2-READ.hdr");
        log(c1, of(10_000, 10_000, 10_000), of(20_000));
        log(c2, of(1_000_000));
        assertThat(HdrLatency.read(c1).getTotalCount()).isEqualTo(4);
        Histogram sum = HdrLatency.sum(List.of(c1, c2));
        LatencyFigures f = HdrLatency.figures(sum);
        assertThat(f.count()).isEqualTo(5);
        // (3 × 10 + 20 + 1000) / 5 µs, not the mean of the two processes' means (12.5 and 1000)
        assertThat(f.meanUs()).isBetween(209.0, 211.0);
        assertThat(f.maxUs()).isBetween(1000.0, 1001.0);
        assertThat(f.p50Us()).isBetween(9.99, 10.01);
    }

    @Test
    void theMergedRunFileReadsBackAsTheSum(@TempDir Path dir) throws IOException {
        log(dir.resolve("run-c1-UPDATE.hdr"), of(5_000, 7_000));
        log(dir.resolve("run-c2-UPDATE.hdr"), of(9_000));
        RunLatency latency = RunLatency.collect(dir, "run", 2);
        assertThat(latency.figures()).containsOnlyKeys("UPDATE");
        assertThat(HdrLatency.read(dir.resolve("run-UPDATE.hdr")).getTotalCount()).isEqualTo(3);
        assertThat(HdrLatency.read(dir.resolve("run-UPDATE.hdr")).getMaxValue()).isBetween(9_000L, 9_010L);
    }

    @Test
    void aLogThatIsNotOneIsAnErrorNamingTheFile(@TempDir Path dir) throws IOException {
        Path bad = Files.writeString(dir.resolve("x-READ.hdr"), "0.1,1.0,0.01,notbase64!!\n");
        assertThatThrownBy(() -> HdrLatency.read(bad)).isInstanceOf(IOException.class).hasMessageContaining("x-READ.hdr");
    }

    @Test
    void theCurveRisesToTheMaximumAtTheLastOperation() {
        Histogram h = new Histogram(3);
        for (int i = 1; i <= 10_000; i++) {
            h.recordValue(i);
        }
        List<HdrLatency.Point> curve = HdrLatency.curve(h);
        assertThat(curve.getFirst().inverseTail()).isEqualTo(1.0);
        for (int i = 1; i < curve.size(); i++) {
            assertThat(curve.get(i).inverseTail()).isGreaterThan(curve.get(i - 1).inverseTail());
            assertThat(curve.get(i).latencyUs()).isGreaterThanOrEqualTo(curve.get(i - 1).latencyUs());
        }
        assertThat(curve.getLast()).isEqualTo(new HdrLatency.Point(10_000, h.getMaxValue() / 1000.0));
        assertThat(HdrLatency.curve(new Histogram(3))).isEmpty();
    }

    @Test
    @Timeout(60)
    void percentilePlotDrawsEveryProtocolOfAWorkload(@TempDir Path dir) throws IOException {
        Histogram fast = new Histogram(3);
        Histogram slow = new Histogram(3);
        for (int i = 0; i < 100_000; i++) {
            fast.recordValue(300 + i % 700);
            slow.recordValue(20_000 + i % 300_000);
        }
        slow.recordValue(200_000_000);
        Map<RunRecord, RunLatency> histograms = new IdentityHashMap<>();
        RunRecord a = run("erda", fast, histograms);
        RunRecord b = run("redo-log", slow, histograms);
        List<Path> files = PercentilePlots.write(List.of(a, b), histograms, 1024, 1, 1, dir);
        assertThat(files).containsExactly(dir.resolve("percentiles-A.png"));
        assertThat(Files.size(files.getFirst())).isGreaterThan(1000);
    }

    private static RunRecord run(String protocol, Histogram h, Map<RunRecord, RunLatency> histograms) {
        Map<String, Histogram> hs = new LinkedHashMap<>(Map.of("READ", h));
        Map<String, LatencyFigures> fs = Map.of("READ", HdrLatency.figures(h));
        RunRecord r = new RunRecord("shm", protocol, "A", 1024, 1, 1000, 1.0, 2.0, null, null, null, null, 1.0, 1, null, fs);
        histograms.put(r, new RunLatency(hs, fs));
        return r;
    }
}
