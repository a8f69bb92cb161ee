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
 * @param nvmCleanerBytesPerOp the part of {@code nvmBytesPerOp} the log cleaner wrote (its copies of live objects,
 *                        its zeroing of retired regions: the server's {@code nvm_bytes_cleaner}); null if not reported
 * @param cleanerCpuUsPerOp the part of {@code serverCpuUsPerOp} the log cleaner spent (the server's
 *                        {@code cleaner_cpu_ns}); null if not reported
 */
public record RunRecord(String fabric, String protocol, String workload, int valueSize, int threads,
                        double throughputOps, Double readMeanUs, Double readP99Us, Double updateMeanUs,
                        Double updateP99Us, Double nvmBytesPerOp, Double serverCpuUsPerOp, Double meanUs,
                        int clients, Long targetOps, Map<String, LatencyFigures> latency, Double nvmCleanerBytesPerOp,
                        Double cleanerCpuUsPerOp) {

    public RunRecord {
        latency = Map.copyOf(latency);
    }

    /** A run whose server did not say what its cleaner wrote. */
    public RunRecord(String fabric, String protocol, String workload, int valueSize, int threads, double throughputOps,
                     Double readMeanUs, Double readP99Us, Double updateMeanUs, Double updateP99Us, Double nvmBytesPerOp,
                     Double serverCpuUsPerOp, Double meanUs, int clients, Long targetOps, Map<String, LatencyFigures> latency) {
        this(fabric, protocol, workload, valueSize, threads, throughputOps, readMeanUs, readP99Us, updateMeanUs,
            updateP99Us, nvmBytesPerOp, serverCpuUsPerOp, meanUs, clients, targetOps, latency, null, null);
    }

    /** A run whose server said what its cleaner wrote, not what CPU it spent. */
    public RunRecord(String fabric, String protocol, String workload, int valueSize, int threads, double throughputOps,
                     Double readMeanUs, Double readP99Us, Double updateMeanUs, Double updateP99Us, Double nvmBytesPerOp,
                     Double serverCpuUsPerOp, Double meanUs, int clients, Long targetOps, Map<String, LatencyFigures> latency,
                     Double nvmCleanerBytesPerOp) {
        this(fabric, protocol, workload, valueSize, threads, throughputOps, readMeanUs, readP99Us, updateMeanUs,
            updateP99Us, nvmBytesPerOp, serverCpuUsPerOp, meanUs, clients, targetOps, latency, nvmCleanerBytesPerOp, null);
    }

    /** Server CPU per operation on the request path: all but the cleaner's (null if either is unknown). */
    public Double requestPathCpuUsPerOp() {
        return serverCpuUsPerOp == null || cleanerCpuUsPerOp == null ? null : serverCpuUsPerOp - cleanerCpuUsPerOp;
    }

    /** NVM bytes per operation on the request path: all but what the cleaner wrote (null if either is unknown). */
    public Double nvmRequestPathBytesPerOp() {
        return nvmBytesPerOp == null || nvmCleanerBytesPerOp == null ? null : nvmBytesPerOp - nvmCleanerBytesPerOp;
    }

    /** A closed-loop run of one client process with no histograms (tests and callers that have only the means). */
    public RunRecord(String fabric, String protocol, String workload, int valueSize, int threads, double throughputOps,
                     Double readMeanUs, Double readP99Us, Double updateMeanUs, Double updateP99Us, Double nvmBytesPerOp,
                     Double serverCpuUsPerOp, Double meanUs) {
        this(fabric, protocol, workload, valueSize, threads, throughputOps, readMeanUs, readP99Us, updateMeanUs,
            updateP99Us, nvmBytesPerOp, serverCpuUsPerOp, meanUs, 1, null, Map.of());
    }
}
