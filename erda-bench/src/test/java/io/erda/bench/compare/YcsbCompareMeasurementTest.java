package io.erda.bench.compare;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import org.HdrHistogram.Histogram;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * What makes the comparison trustworthy, end to end with real YCSB JVMs against misbehaving stand-in servers
 * ({@code io.erda.bench.backend.MemoryBackend}): the warm-up stays out of the figures, the full histograms are
 * exported, open loop shows a stall that closed-loop timing hides, several client processes are added up.
 */
class YcsbCompareMeasurementTest {

    /** memory-cold's first 5 GETs take 300 ms; nothing else should come near (the histograms hold ns). */
    private static final long SLOW_NS = 250_000_000;

    @Test
    @Timeout(120)
    void theWarmUpIsNotMeasuredAndTheFullHistogramIsExported(@TempDir Path out) throws Exception {
        // memory-cold answers its first 5 GETs 300 ms late: a cold start, exaggerated
        Path cold = out.resolve("cold");
        run(cold, "--protocols", "memory-cold", "--workloads", "C", "--warmup", "0", "--duration", "2");
        Path warm = out.resolve("warm");
        run(warm, "--protocols", "memory-cold", "--workloads", "C", "--warmup", "2", "--duration", "2");
        String label = "raw/shm-memory-cold-v64-C-t1";
        Histogram coldReads = HdrLatency.read(cold.resolve(label + "-READ.hdr"));
        Histogram warmReads = HdrLatency.read(warm.resolve(label + "-READ.hdr"));
        assertThat(coldReads.getCountBetweenValues(SLOW_NS, Long.MAX_VALUE)).as("slow reads without warm-up").isGreaterThanOrEqualTo(5);
        // none of the five, but a loaded machine may stall a process that long once or twice
        assertThat(warmReads.getCountBetweenValues(SLOW_NS, Long.MAX_VALUE)).as("slow reads after the warm-up").isLessThanOrEqualTo(2);
        // the exported histogram holds every measured operation: YCSB's own count agrees
        YcsbOutput o = YcsbOutput.parse(Files.readString(warm.resolve(label + ".out")));
        assertThat(warmReads.getTotalCount()).isEqualTo(o.ok("READ")).isPositive();
        assertThat(Files.readString(warm.resolve(label + ".err"))).contains("erda-ycsb: warmed up (");
        assertThat(Files.readString(warm.resolve("results.md"))).contains("a warm-up of 2.00 s", "excluded from every figure",
            "## Latency percentiles");
        assertThat(Files.size(warm.resolve("percentiles-C.png"))).isPositive();
    }

    @Test
    @Timeout(120)
    void latenciesAreRecordedInNanosecondsNotTruncatedToWholeMicroseconds(@TempDir Path out) throws Exception {
        run(out, "--protocols", "memory", "--workloads", "C", "--warmup", "0.5", "--duration", "2");
        String label = "raw/shm-memory-v64-C-t1";
        Histogram reads = HdrLatency.read(out.resolve(label + "-READ.hdr"));
        YcsbOutput ycsb = YcsbOutput.parse(Files.readString(out.resolve(label + ".out")));
        assertThat(reads.getTotalCount()).isEqualTo(ycsb.ok("READ")).isGreaterThan(1000);
        // YCSB's DBWrapper records (end - start) / 1000: whole µs. A histogram of those would hold only multiples of
        // 1000 ns; these are the binding's nanoseconds (a bucket may round onto a multiple now and then)
        long wholeMicros = 0;
        for (var v : reads.recordedValues()) {
            if (reads.lowestEquivalentValue(v.getValueIteratedTo()) % 1000 == 0) {
                wholeMicros += v.getCountAtValueIteratedTo();
            }
        }
        assertThat(wholeMicros).as("operations recorded at a whole µs").isLessThan(reads.getTotalCount() / 10);
        // the same operations YCSB timed. YCSB's span encloses the binding's, and it truncates: its mean is below ours
        // by less than a µs. It is above ours by what lies in its span but outside the binding's (DBWrapper's clock
        // reads, the binding's recording and result copy, a GC or a preemption there): on this 2-core VM 0.23, 0.48 and
        // 1.09 µs at means of 22 to 30 µs, the last on 3937585, before this bound (it was 0.2 µs). Within 5 % and a µs,
        // the two still time the same operations; the whole-µs count above is what tells nanoseconds from truncation
        double ycsbMean = ycsb.meanMicros("READ");
        double mean = HdrLatency.figures(reads).meanUs();
        assertThat(mean).isBetween(ycsbMean * 0.95 - 1.0, ycsbMean + 1.0);
    }

    @Test
    @Timeout(120)
    void openLoopShowsAStallThatTheOperationsOwnTimingHides(@TempDir Path out) throws Exception {
        // memory-stall stalls once for 200 ms; at 1000 ops/s about 200 operations were due during it
        run(out, "--protocols", "memory-stall", "--workloads", "C", "--warmup", "0.5", "--duration", "3", "--target-ops", "1000");
        LatencyFigures intended = HdrLatency.figures(HdrLatency.read(out.resolve("raw/shm-memory-stall-v64-C-t1-Intended-READ.hdr")));
        LatencyFigures actual = HdrLatency.figures(HdrLatency.read(out.resolve("raw/shm-memory-stall-v64-C-t1-READ.hdr")));
        assertThat(actual.maxUs()).as("the stalled operation itself").isGreaterThanOrEqualTo(180_000);
        assertThat(actual.p999Us()).as("op-time p99.9 hides it").isLessThan(50_000);
        assertThat(intended.p99Us()).as("intended-time p99 shows it").isGreaterThanOrEqualTo(120_000);
        assertThat(intended.p999Us()).isGreaterThanOrEqualTo(150_000);
        assertThat(intended.count()).isEqualTo(actual.count());
        // one thread of one process paces by spinning where a core is left for the server (YcsbCompare.spinPacing)
        assertThat(Files.readString(out.resolve("raw/shm-memory-stall-v64-C-t1.err")))
            .contains("-p spin.sleep=" + (Runtime.getRuntime().availableProcessors() >= 2));
        String json = Files.readString(out.resolve("summary.json"));
        assertThat(json).contains("\"target_ops\": 1000", "\"Intended-READ\": {\"count\": " + intended.count());
        // the run's read figures are the intended ones
        assertThat(json).contains("\"read_p99_us\": " + SummaryJson.number(intended.p99Us()) + ",");
        assertThat(Files.readString(out.resolve("results.md"))).contains("Open loop at 1000 ops/s", "spinning where threads",
            "| READ | intended start |",
            "| READ | actual start |");
    }

    @Test
    @Timeout(120)
    void severalClientProcessesAreAddedUp(@TempDir Path out) throws Exception {
        run(out, "--protocols", "memory", "--workloads", "B", "--warmup", "0.5", "--duration", "2", "--clients", "2");
        String label = "raw/shm-memory-v64-B-t1-p2";
        YcsbOutput c1 = YcsbOutput.parse(Files.readString(out.resolve(label + "-c1.out")));
        YcsbOutput c2 = YcsbOutput.parse(Files.readString(out.resolve(label + "-c2.out")));
        assertThat(c1.ok("READ")).isPositive();
        assertThat(c2.ok("READ")).isPositive();
        Histogram reads = HdrLatency.read(out.resolve(label + "-READ.hdr"));
        assertThat(reads.getTotalCount()).isEqualTo(c1.ok("READ") + c2.ok("READ"));
        String json = Files.readString(out.resolve("summary.json"));
        assertThat(json).contains("\"clients\": 2", "\"throughput_ops\": " + SummaryJson.number(c1.throughput() + c2.throughput()) + ",");
        assertThat(Files.readString(out.resolve("results.md"))).contains("| shm | B | 64 | 2×1 | memory |");
    }

    private static void run(Path out, String... args) throws IOException {
        ByteArrayOutputStream log = new ByteArrayOutputStream();
        String[] all = new String[args.length + 6];
        System.arraycopy(args, 0, all, 0, args.length);
        System.arraycopy(new String[] {"--records", "200", "--value-size", "64", "--out", out.toString()}, 0, all, args.length, 6);
        int status = YcsbCompareStandInTest.run(log, all);
        assertThat(status).as(log.toString(StandardCharsets.UTF_8)).isZero();
    }
}
