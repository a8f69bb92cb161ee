package io.erda.bench.compare;

import java.util.List;
import java.util.Locale;

/**
 * The value-size sweep of ycsb-compare (RDMP-KV's Figs. 7 and 8): per protocol and value size, of the update-only
 * runs, throughput, mean update latency, server CPU per PUT and the server-side PUT throughput that CPU allows (PUTs
 * per server core-second, 10⁶ / µs per PUT: the paper measures its server saturated), and of the YCSB-A and B runs the
 * mean update and read latency.
 */
final class ValueSizeTable {
    private ValueSizeTable() {
    }

    static String markdown(List<RunRecord> runs) {
        StringBuilder b = new StringBuilder("\n## Value-size sweep\n\n");
        b.append("Update-only: server PUT/s per core = 10^6 / server CPU µs per PUT.\n\n");
        b.append("| protocol | value B | update-only ops/s | update µs | server CPU µs/PUT | server PUT/s per core |"
                + " A update µs | A read µs | B update µs | B read µs |\n");
        b.append("|---|---|---|---|---|---|---|---|---|---|\n");
        for (String protocol : ReportPlots.distinct(runs, RunRecord::protocol)) {
            for (int size : ReportPlots.distinct(runs, RunRecord::valueSize)) {
                RunRecord u = find(runs, protocol, size, "update-only");
                RunRecord a = find(runs, protocol, size, "A");
                RunRecord bw = find(runs, protocol, size, "B");
                if (u == null && a == null && bw == null) {
                    continue;
                }
                Double cpu = u == null ? null : u.serverCpuUsPerOp();
                b.append(String.format(Locale.ROOT, "| %s | %d | %s | %s | %s | %s | %s | %s | %s | %s |%n", protocol,
                        size, fmt(u == null ? null : u.throughputOps()), fmt(u == null ? null : u.updateMeanUs()),
                        fmt(cpu), fmt(cpu == null || cpu <= 0 ? null : 1e6 / cpu),
                        fmt(a == null ? null : a.updateMeanUs()), fmt(a == null ? null : a.readMeanUs()),
                        fmt(bw == null ? null : bw.updateMeanUs()), fmt(bw == null ? null : bw.readMeanUs())));
            }
        }
        return b.toString();
    }

    private static String fmt(Double v) {
        return v == null ? "-" : ComparisonTable.fmt(v);
    }

    private static RunRecord find(List<RunRecord> runs, String protocol, int size, String workload) {
        return runs.stream().filter(r -> r.protocol().equals(protocol) && r.valueSize() == size
                && r.workload().equals(workload)).findFirst().orElse(null);
    }
}
