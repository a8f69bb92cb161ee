package io.erda.bench.compare;

/**
 * The figures of one measured YCSB run: one protocol, one workload, one value size, one thread count. A figure
 * that does not apply (update latency of YCSB-C, read latency of update-only) is null, and so is one the server did
 * not report.
 *
 * @param workload        {@code A}, {@code B}, {@code C} or {@code update-only}
 * @param nvmBytesPerOp   growth of the server's {@code nvm_bytes_written} over the run, per operation
 * @param serverCpuUsPerOp growth of the server's {@code server_cpu_ns} (server threads, NIC engine apart) per operation
 * @param meanUs          mean latency over all operations of the run (for the latency plots; not in summary.json)
 */
public record RunRecord(String fabric, String protocol, String workload, int valueSize, int threads,
                        double throughputOps, Double readMeanUs, Double readP99Us, Double updateMeanUs,
                        Double updateP99Us, Double nvmBytesPerOp, Double serverCpuUsPerOp, Double meanUs) {
}
