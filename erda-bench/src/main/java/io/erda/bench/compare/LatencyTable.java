package io.erda.bench.compare;

import java.util.List;
import java.util.Locale;

/**
 * The percentile section of results.md: per run and histogram, operations, mean, p50, p99, p99.9 and max from the
 * run's full HdrHistogram (measured window only, all client processes added). Open-loop runs list each operation
 * twice: from its intended start (what a caller waiting on a schedule sees) and from its actual start (what a
 * closed-loop benchmark would have reported, hiding stalls).
 */
final class LatencyTable {

    private LatencyTable() {
    }

    static String markdown(List<RunRecord> runs) {
        if (runs.stream().allMatch(r -> r.latency().isEmpty())) {
            return "";
        }
        StringBuilder b = new StringBuilder("\n## Latency percentiles (µs, full HdrHistogram of the measured window)\n\n");
        b.append("| fabric | workload | value B | threads | protocol | operation | latency from | operations | mean | p50 "
            + "| p99 | p99.9 | max |\n");
        b.append("|---|---|---:|---:|---|---|---|---:|---:|---:|---:|---:|---:|\n");
        for (RunRecord r : runs) {
            for (String name : RunLatency.NAMES) {
                LatencyFigures f = r.latency().get(name);
                if (f == null) {
                    continue;
                }
                boolean intended = name.startsWith("Intended-");
                b.append(String.format(Locale.ROOT, "| %s | %s | %d | %s | %s | %s | %s | %d | %s | %s | %s | %s | %s |%n",
                    r.fabric(), r.workload(), r.valueSize(), ComparisonTable.threads(r), r.protocol(),
                    intended ? name.substring("Intended-".length()) : name,
                    intended ? "intended start" : r.targetOps() != null ? "actual start" : "start",
                    f.count(), ComparisonTable.fmt(f.meanUs()), ComparisonTable.fmt(f.p50Us()), ComparisonTable.fmt(f.p99Us()),
                    ComparisonTable.fmt(f.p999Us()), ComparisonTable.fmt(f.maxUs())));
            }
        }
        return b.toString();
    }
}
