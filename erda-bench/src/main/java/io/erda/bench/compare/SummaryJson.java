package io.erda.bench.compare;

import java.util.List;
import java.util.Locale;

/**
 * summary.json: a JSON array with one object per run, fields in this order: fabric, protocol, workload,
 * value_size, threads, throughput_ops, read_mean_us, read_p99_us, update_mean_us, update_p99_us,
 * nvm_bytes_per_op, nvm_cleaner_bytes_per_op (the part the log cleaner wrote), server_cpu_us_per_op,
 * cleaner_cpu_us_per_op (the part the log cleaner spent), clients
 * (client processes, each with {@code threads} threads),
 * target_ops (open loop: the intended ops/s; null: closed loop; an open-loop run's read and update figures are from
 * the intended start), latency (per YCSB histogram, e.g. {@code READ} or {@code Intended-READ}: count, mean_us,
 * p50_us, p99_us, p999_us, max_us of the full histogram); null where a figure does not apply. Written by hand:
 * flat fields and one level of nesting do not need a JSON library on the class path.
 *
 * <p>For protocol {@code redis} (a peer row) nvm_bytes_per_op is the growth of its append-only file per operation.
 */
public final class SummaryJson {

    private SummaryJson() {
    }

    public static String write(List<RunRecord> runs) {
        StringBuilder b = new StringBuilder("[");
        for (int i = 0; i < runs.size(); i++) {
            RunRecord r = runs.get(i);
            b.append(i == 0 ? "\n  {" : ",\n  {");
            b.append("\"fabric\": ").append(string(r.fabric()));
            b.append(", \"protocol\": ").append(string(r.protocol()));
            b.append(", \"workload\": ").append(string(r.workload()));
            b.append(", \"value_size\": ").append(r.valueSize());
            b.append(", \"threads\": ").append(r.threads());
            b.append(", \"throughput_ops\": ").append(number(r.throughputOps()));
            b.append(", \"read_mean_us\": ").append(number(r.readMeanUs()));
            b.append(", \"read_p99_us\": ").append(number(r.readP99Us()));
            b.append(", \"update_mean_us\": ").append(number(r.updateMeanUs()));
            b.append(", \"update_p99_us\": ").append(number(r.updateP99Us()));
            b.append(", \"nvm_bytes_per_op\": ").append(number(r.nvmBytesPerOp()));
            b.append(", \"nvm_cleaner_bytes_per_op\": ").append(number(r.nvmCleanerBytesPerOp()));
            b.append(", \"server_cpu_us_per_op\": ").append(number(r.serverCpuUsPerOp()));
            b.append(", \"cleaner_cpu_us_per_op\": ").append(number(r.cleanerCpuUsPerOp()));
            b.append(", \"clients\": ").append(r.clients());
            b.append(", \"target_ops\": ").append(r.targetOps() == null ? "null" : r.targetOps().toString());
            b.append(", \"latency\": {");
            String sep = "";
            for (String name : RunLatency.NAMES) {
                LatencyFigures f = r.latency().get(name);
                if (f != null) {
                    b.append(sep).append(string(name)).append(": {\"count\": ").append(f.count())
                        .append(", \"mean_us\": ").append(number(f.meanUs())).append(", \"p50_us\": ").append(number(f.p50Us()))
                        .append(", \"p99_us\": ").append(number(f.p99Us())).append(", \"p999_us\": ").append(number(f.p999Us()))
                        .append(", \"max_us\": ").append(number(f.maxUs())).append('}');
                    sep = ", ";
                }
            }
            b.append("}}");
        }
        return b.append(runs.isEmpty() ? "]\n" : "\n]\n").toString();
    }

    /** A JSON number with at most 3 decimals; null for null, NaN and infinities (JSON has no such numbers). */
    static String number(Double v) {
        if (v == null || v.isNaN() || v.isInfinite()) {
            return "null";
        }
        if (v == Math.rint(v) && Math.abs(v) < 1e15) {
            return Long.toString(v.longValue());
        }
        return String.format(Locale.ROOT, "%.3f", v).replaceAll("0+$", "");
    }

    static String string(String s) {
        if (s == null) {
            return "null";
        }
        StringBuilder b = new StringBuilder("\"");
        for (char c : s.toCharArray()) {
            switch (c) {
                case '"' -> b.append("\\\"");
                case '\\' -> b.append("\\\\");
                default -> {
                    if (c < 0x20) {
                        b.append(String.format(Locale.ROOT, "\\u%04x", (int) c));
                    } else {
                        b.append(c);
                    }
                }
            }
        }
        return b.append('"').toString();
    }
}
