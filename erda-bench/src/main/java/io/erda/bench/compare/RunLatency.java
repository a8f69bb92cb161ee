package io.erda.bench.compare;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.HdrHistogram.Histogram;

/**
 * A run's full latency histograms (ns), per YCSB operation name, from the HdrHistogram logs its client processes wrote
 * ({@code raw/CLIENT-NAME.hdr}); with several processes their sum is written as the run's own
 * {@code raw/RUN-NAME.hdr}, so every run has one file per name whatever its process count.
 *
 * @param histograms the sums, in {@link #NAMES} order
 * @param figures    their figures
 */
record RunLatency(Map<String, Histogram> histograms, Map<String, LatencyFigures> figures) {

    /** The histograms of the operations our workloads issue: from the actual start, then from the intended start. */
    static final List<String> NAMES = List.of("READ", "UPDATE", "INSERT", "DELETE",
        "Intended-READ", "Intended-UPDATE", "Intended-INSERT", "Intended-DELETE");

    static RunLatency collect(Path rawDir, String label, int clients) throws IOException {
        Map<String, Histogram> histograms = new LinkedHashMap<>();
        Map<String, LatencyFigures> figures = new LinkedHashMap<>();
        for (String name : NAMES) {
            List<Path> files = new ArrayList<>();
            for (int i = 0; i < clients; i++) {
                Path f = rawDir.resolve(YcsbProcess.clientLabel(label, i, clients) + "-" + name + ".hdr");
                if (Files.isRegularFile(f)) {
                    files.add(f);
                }
            }
            if (files.isEmpty()) {
                continue;
            }
            Histogram sum = HdrLatency.sum(files);
            if (clients > 1) {
                HdrLatency.write(sum, rawDir.resolve(label + "-" + name + ".hdr"),
                    "[" + name + " of " + label + ": the sum of " + files.size() + " client processes' histograms, ns]");
            }
            histograms.put(name, sum);
            figures.put(name, HdrLatency.figures(sum));
        }
        return new RunLatency(histograms, figures);
    }
}
