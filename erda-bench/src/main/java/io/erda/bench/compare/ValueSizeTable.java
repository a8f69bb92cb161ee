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

    /**
     * RDMP-KV's acceptance lines, where the runs have the protocols: per value size, YCSB-A's mean update latency of
     * RDMP-SA and RDMP-CC against HERD's (paper Fig. 9: −38% and −65%), and Erda's server CPU per operation of A and B
     * against RDMP-CC's (Erda's GET needs no server CPU, RDMP's a lookup RPC); and update-only's server CPU per PUT of
     * RDMP-CC against HERD's at the largest size (paper Fig. 7: 22× the throughput at 256 KB). Empty without them.
     */
    static String acceptance(List<RunRecord> runs) {
        StringBuilder b = new StringBuilder();
        for (int size : ReportPlots.distinct(runs, RunRecord::valueSize)) {
            RunRecord herdA = find(runs, "herd", size, "A");
            for (String p : List.of("rdmp-sa", "rdmp-cc")) {
                RunRecord a = find(runs, p, size, "A");
                if (herdA != null && a != null && a.updateMeanUs() != null && herdA.updateMeanUs() != null) {
                    double x = a.updateMeanUs() / herdA.updateMeanUs();
                    line(b, String.format(Locale.ROOT, "YCSB-A update mean of %s ≤ HERD's at %d B (paper: %s)", p, size,
                            p.equals("rdmp-sa") ? "0.62×" : "0.35×"), x, x <= 1);
                }
            }
            for (String w : List.of("A", "B")) {
                RunRecord erda = find(runs, "erda", size, w);
                RunRecord cc = find(runs, "rdmp-cc", size, w);
                if (erda != null && cc != null && erda.serverCpuUsPerOp() != null && cc.serverCpuUsPerOp() != null
                        && cc.serverCpuUsPerOp() > 0) {
                    double x = erda.serverCpuUsPerOp() / cc.serverCpuUsPerOp();
                    line(b, String.format(Locale.ROOT, "YCSB-%s server CPU per operation of Erda < RDMP-CC's at %d B"
                            + " (GETs with no server CPU against a lookup RPC)", w, size), x, x < 1);
                }
            }
        }
        int largest = ReportPlots.distinct(runs, RunRecord::valueSize).stream().mapToInt(Integer::intValue).max().orElse(0);
        RunRecord herd = find(runs, "herd", largest, "update-only");
        RunRecord cc = find(runs, "rdmp-cc", largest, "update-only");
        if (herd != null && cc != null && herd.serverCpuUsPerOp() != null && cc.serverCpuUsPerOp() != null
                && cc.serverCpuUsPerOp() > 0) {
            double x = herd.serverCpuUsPerOp() / cc.serverCpuUsPerOp();
            line(b, String.format(Locale.ROOT, "server PUT throughput of RDMP-CC > HERD's at %d B (paper: 22× at 256 KB)",
                    largest), x, x > 1);
        }
        return b.isEmpty() ? "" : "\n## Acceptance (RDMP-KV's figures)\n\n" + b;
    }

    private static void line(StringBuilder b, String what, double measured, boolean met) {
        b.append(String.format(Locale.ROOT, "- %s %s: measured %s%n", met ? "met" : "NOT met", what,
                ComparisonTable.fmt(measured)));
    }

    private static String fmt(Double v) {
        return v == null ? "-" : ComparisonTable.fmt(v);
    }

    private static RunRecord find(List<RunRecord> runs, String protocol, int size, String workload) {
        return runs.stream().filter(r -> r.protocol().equals(protocol) && r.valueSize() == size
                && r.workload().equals(workload)).findFirst().orElse(null);
    }
}
