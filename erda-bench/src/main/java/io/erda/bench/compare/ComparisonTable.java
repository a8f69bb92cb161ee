package io.erda.bench.compare;

import java.util.List;
import java.util.Locale;
import java.util.Objects;
import java.util.function.Function;

/**
 * results.md: every run's figures, then each protocol's ratios against Redo Logging in the same setting (fabric,
 * workload, value size, threads), then the acceptance checks where the runs cover them.
 */
final class ComparisonTable {

    static final String REFERENCE = "redo-log";

    private ComparisonTable() {
    }

    static String markdown(List<RunRecord> runs, String heading) {
        return markdown(runs, heading, "");
    }

    /** As {@link #markdown(List, String)}, with {@code acceptanceNote} (a paragraph, or empty) under the acceptance lines. */
    static String markdown(List<RunRecord> runs, String heading, String acceptanceNote) {
        StringBuilder b = new StringBuilder("# ").append(heading).append("\n\n");
        b.append("| fabric | workload | value B | threads | protocol | throughput ops/s | read mean µs | read p99 µs "
            + "| update mean µs | update p99 µs | NVM B/op | server CPU µs/op |\n");
        b.append("|---|---|---:|---:|---|---:|---:|---:|---:|---:|---:|---:|\n");
        for (RunRecord r : runs) {
            b.append(String.format(Locale.ROOT, "| %s | %s | %d | %s | %s | %s | %s | %s | %s | %s | %s | %s |%n",
                r.fabric(), r.workload(), r.valueSize(), threads(r), PeerSystems.label(r.protocol()), fmt(r.throughputOps()),
                fmt(r.readMeanUs()), fmt(r.readP99Us()), fmt(r.updateMeanUs()), fmt(r.updateP99Us()),
                fmt(r.nvmBytesPerOp()), fmt(r.serverCpuUsPerOp())));
        }
        if (runs.stream().anyMatch(r -> r.clients() > 1)) {
            b.append("\nthreads K×T: K client processes of T threads each.\n");
        }
        b.append("\n## Ratios against Redo Logging (same fabric, workload, value size, threads)\n\n");
        b.append("Throughput: higher is better; latency, NVM bytes and server CPU: lower is better.\n\n");
        b.append("| fabric | workload | value B | threads | protocol | throughput × | read mean × | update mean × "
            + "| NVM B/op × | server CPU/op × |\n");
        b.append("|---|---|---:|---:|---|---:|---:|---:|---:|---:|\n");
        boolean any = false;
        for (RunRecord r : runs) {
            RunRecord ref = reference(runs, r);
            if (ref == null || r.protocol().equals(REFERENCE)) {
                continue;
            }
            any = true;
            b.append(String.format(Locale.ROOT, "| %s | %s | %d | %s | %s | %s | %s | %s | %s | %s |%n",
                r.fabric(), r.workload(), r.valueSize(), threads(r), PeerSystems.label(r.protocol()),
                ratio(r, ref, RunRecord::throughputOps), ratio(r, ref, RunRecord::readMeanUs),
                ratio(r, ref, RunRecord::updateMeanUs), ratio(r, ref, RunRecord::nvmBytesPerOp),
                ratio(r, ref, RunRecord::serverCpuUsPerOp)));
        }
        if (!any) {
            b.append("| (no Redo Logging runs to compare with) | | | | | | | | | |\n");
        }
        String acceptance = acceptance(runs);
        if (!acceptance.isEmpty()) {
            b.append("\n## Acceptance (shm, 1 KiB values)\n\n").append(acceptance).append(acceptanceNote);
        }
        return b.toString();
    }

    /** The Redo Logging run in the same setting as {@code r} ({@link #sameSetting}), or null. */
    static RunRecord reference(List<RunRecord> runs, RunRecord r) {
        for (RunRecord o : runs) {
            if (o.protocol().equals(REFERENCE) && sameSetting(o, r)) {
                return o;
            }
        }
        return null;
    }

    /**
     * Whether two runs may stand side by side as like for like: same fabric, workload, value size, threads per
     * process, client processes and open-loop target. Throughput is summed over the processes, so K processes
     * against one would compare K times the offered load.
     */
    static boolean sameSetting(RunRecord a, RunRecord b) {
        return a.fabric().equals(b.fabric()) && a.workload().equals(b.workload()) && a.valueSize() == b.valueSize()
            && a.threads() == b.threads() && a.clients() == b.clients() && Objects.equals(a.targetOps(), b.targetOps());
    }

    /**
     * The issues' targets: Erda vs Redo Logging throughput on C, B, A and update-only; server CPU per GET; NVM bytes
     * per update; and, for one closed-loop thread, Erda's update mean in update-only and B.
     */
    static String acceptance(List<RunRecord> runs) {
        StringBuilder b = new StringBuilder();
        oneSidedAcceptance(runs, b);
        for (RunRecord r : runs) {
            if (!r.protocol().equals("erda") || !r.fabric().equals("shm") || r.valueSize() != 1024) {
                continue;
            }
            RunRecord ref = reference(runs, r);
            String where = " (" + ReportPlots.setting(0, r.threads(), r.clients()) + ")";
            // the paper's throughput ratios over Redo Logging (§5.3, Figs. 18-20: C 1.53, B 1.50, A 1.38) rounded down;
            // for update-only (Fig. 21) it reports the two as about equal, so Erda must at least match it
            double target = switch (r.workload()) {
                case "C" -> 1.5;
                case "B" -> 1.4;
                case "A" -> 1.3;
                case "update-only" -> 1.0;
                default -> 0;
            };
            if (target > 0 && ref != null) {
                check(b, "YCSB-" + r.workload() + " throughput ≥ " + target + "× Redo Logging" + where,
                    r.throughputOps() / ref.throughputOps(), r.throughputOps() / ref.throughputOps() >= target);
            }
            // the latency a PUT on shm allows (two-sided request, one-sided WRITE): for one thread of one closed-loop
            // client, where the means are the round trips of one operation after another
            int updateTarget = switch (r.workload()) {
                case "update-only" -> 10;
                case "B" -> 15;
                default -> 0;
            };
            if (updateTarget > 0 && r.updateMeanUs() != null && r.threads() == 1 && r.clients() == 1
                    && r.targetOps() == null) {
                check(b, String.format(Locale.ROOT, "YCSB-%s update mean ≤ %d µs%s", r.workload(), updateTarget, where),
                    r.updateMeanUs(), r.updateMeanUs() <= updateTarget);
            }
            if (r.workload().equals("C") && r.serverCpuUsPerOp() != null) {
                check(b, "server CPU per GET is 0 µs" + where, r.serverCpuUsPerOp(), r.serverCpuUsPerOp() == 0);
            }
            if (r.workload().equals("update-only") && ref != null && r.nvmRequestPathBytesPerOp() != null
                    && ref.nvmRequestPathBytesPerOp() != null) {
                // the paper's figure: what an update writes, not what keeping the log costs later (cleaner copies and
                // zeroing are in the tables, and apply to every protocol's log alike)
                double x = r.nvmRequestPathBytesPerOp() / ref.nvmRequestPathBytesPerOp();
                check(b, String.format(Locale.ROOT, "NVM bytes per update on the request path ≤ 0.55× Redo Logging%s"
                        + " (the cleaner's copies and zeroing left out; with them %s)", where,
                        fmt(r.nvmBytesPerOp() / ref.nvmBytesPerOp())), x, x <= 0.55);
            } else if (r.workload().equals("update-only") && ref != null && r.nvmBytesPerOp() != null
                    && ref.nvmBytesPerOp() != null) {
                double x = r.nvmBytesPerOp() / ref.nvmBytesPerOp();
                check(b, "NVM bytes per update ≤ 0.55× Redo Logging" + where, x, x <= 0.55);
            }
        }
        return b.toString();
    }

    /**
     * Issue 35's targets for the one-sided PUT (docs/one-sided-put.md), where the runs have {@code erda-one-sided}:
     * update-only throughput ≥ 3× Redo Logging's and ≥ 2× Erda's reserve mode, server CPU per update ≤ 0.1 µs, and for
     * one closed-loop thread an update mean ≤ 3 µs.
     */
    private static void oneSidedAcceptance(List<RunRecord> runs, StringBuilder b) {
        for (RunRecord r : runs) {
            if (!r.protocol().equals("erda-one-sided") || !r.fabric().equals("shm") || r.valueSize() != 1024
                    || !r.workload().equals("update-only")) {
                continue;
            }
            String where = " (" + ReportPlots.setting(0, r.threads(), r.clients()) + ")";
            RunRecord redo = reference(runs, r);
            if (redo != null) {
                double x = r.throughputOps() / redo.throughputOps();
                check(b, "one-sided PUT: YCSB-update-only throughput ≥ 3× Redo Logging" + where, x, x >= 3);
            }
            for (RunRecord o : runs) {
                if (o.protocol().equals("erda") && sameSetting(o, r)) {
                    double x = r.throughputOps() / o.throughputOps();
                    check(b, "one-sided PUT: YCSB-update-only throughput ≥ 2× Erda's reserve mode" + where, x, x >= 2);
                }
            }
            if (r.requestPathCpuUsPerOp() != null) {
                // the update's path, block grants included; keeping the log (the cleaner's copies and zeroing) costs
                // every protocol's log alike and is shown beside it, as for NVM bytes
                check(b, String.format(Locale.ROOT, "one-sided PUT: server CPU per update ≤ 0.1 µs%s, block grants"
                        + " included (the cleaner's CPU left out; with it %s)", where, fmt(r.serverCpuUsPerOp())),
                        r.requestPathCpuUsPerOp(), r.requestPathCpuUsPerOp() <= 0.1);
            } else if (r.serverCpuUsPerOp() != null) {
                check(b, "one-sided PUT: server CPU per update ≤ 0.1 µs" + where, r.serverCpuUsPerOp(),
                        r.serverCpuUsPerOp() <= 0.1);
            }
            if (r.updateMeanUs() != null && r.threads() == 1 && r.clients() == 1 && r.targetOps() == null) {
                check(b, "one-sided PUT: YCSB-update-only update mean ≤ 3 µs" + where, r.updateMeanUs(),
                        r.updateMeanUs() <= 3);
            }
        }
    }

    private static void check(StringBuilder b, String what, double measured, boolean met) {
        b.append(String.format(Locale.ROOT, "- %s %s: measured %s%n", met ? "met" : "NOT met", what, fmt(measured)));
    }

    static String ratio(RunRecord r, RunRecord ref, Function<RunRecord, Double> figure) {
        Double a = figure.apply(r);
        Double b = figure.apply(ref);
        if (a == null || b == null) {
            return "n/a";
        }
        if (b == 0) {
            return Objects.equals(a, 0.0) ? "1.00" : "∞";
        }
        return String.format(Locale.ROOT, "%.2f", a / b);
    }

    /** The threads column: {@code T}, or {@code K×T} for K client processes of T threads each. */
    static String threads(RunRecord r) {
        return r.clients() == 1 ? Integer.toString(r.threads()) : r.clients() + "×" + r.threads();
    }

    static String fmt(Double v) {
        if (v == null) {
            return "—";
        }
        double a = Math.abs(v);
        return String.format(Locale.ROOT, a >= 1000 ? "%.0f" : a >= 10 ? "%.1f" : a == 0 ? "0" : "%.3g", v);
    }
}
