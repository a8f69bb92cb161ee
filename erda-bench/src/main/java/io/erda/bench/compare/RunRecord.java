package io.erda.bench.compare;

import java.util.Map;

/**
 * The figures of one measured YCSB run: one protocol, one workload, one value size, one thread count, one number of
 * client processes. A figure that does not apply (update latency of YCSB-C, read latency of update-only) is null, and
 * so is one the server did not report. Latencies are over the measured window only (the warm-up is excluded) and
 * come from the run's full HdrHistograms, all client processes added; in an open-loop run ({@code targetOps} set) the
 * read and update figures are measured from each operation's intended start time.
 *
 * @param workload        {@code A}, {@code B}, {@code C} or {@code update-only}
 * @param threads         YCSB threads per client process
 * @param throughputOps   operations per second, summed over the client processes
 * @param nvmBytesPerOp   growth of the server's {@code nvm_bytes_written} over the run, per operation
 * @param serverCpuUsPerOp growth of the server's {@code server_cpu_ns} (server threads, NIC engine apart) per operation
 * @param meanUs          mean latency over all operations of the run (for the latency plots; not in summary.json)
 * @param clients         client processes (YCSB JVMs), each with {@code threads} threads
 * @param targetOps       open loop: the intended operations per second over all processes; null: closed loop
 * @param latency         per YCSB histogram name ({@code READ}, {@code UPDATE}: from the operation's actual start;
 *                        {@code Intended-READ}, {@code Intended-UPDATE}: from its intended start, open loop only)
 */
public record RunRecord(String fabric, String protocol, String workload, int valueSize, int threads,
                        double throughputOps, Double readMeanUs, Double readP99Us, Double updateMeanUs,
                        Double updateP99Us, Double nvmBytesPerOp, Double serverCpuUsPerOp, Double meanUs,
                        int clients, Long targetOps, Map<String, LatencyFigures> latency) {

    public RunRecord {
        latency = Map.copyOf(latency);
    }

    /** A closed-loop run of one client process with no histograms (tests and callers that have only the means). */
    public RunRecord(String fabric, String protocol, String workload, int valueSize, int threads, double throughputOps,
                     Double readMeanUs, Double readP99Us, Double updateMeanUs, Double updateP99Us, Double nvmBytesPerOp,
                     Double serverCpuUsPerOp, Double meanUs) {
        this(fabric, protocol, workload, valueSize, threads, throughputOps, readMeanUs, readP99Us, updateMeanUs,
            updateP99Us, nvmBytesPerOp, serverCpuUsPerOp, meanUs, 1, null, Map.of());
    }
}
