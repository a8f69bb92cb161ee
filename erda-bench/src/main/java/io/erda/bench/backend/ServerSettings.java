package io.erda.bench.backend;

import java.nio.file.Path;
import java.time.Duration;

/**
 * How the comparison driver wants a server started.
 *
 * @param fabric           {@code shm}, {@code tcp} or {@code verbs}
 * @param pmDir            an empty directory for the server's PM files (removed by the driver afterwards)
 * @param pmWriteLatencyNs the PM write-latency model per written cache line (paper §5.1: 150 ns), 0 for none
 * @param persistence      the persistence method the server advertises (wsp, read-after-write, server-flush)
 * @param separateProcess  true: a server process of its own; false: in the driver's JVM where the store can be
 *                         embedded (shm only; tcp and verbs always start a process): the driver then reads its
 *                         counters in-process, and the server runs with the driver's JVM options (G1 by default,
 *                         where a process gets the server's, ZGC)
 * @param startTimeout     how long a start may take before it counts as failed
 * @param logDir           where a server process's stdout/stderr go
 * @param verbsHost        verbs: the address the server listens on (its RNIC's IP; 127.0.0.1 on one host)
 * @param regionSize       bytes of one PM log region of a new store, 0 for the server's default (1 GiB); on verbs
 *                         every region is registered (pinned) whole, which is slow under emulation
 * @param cleanThreshold   Erda: clean a head once its chain occupies more than this many bytes (the server's
 *                         {@code --clean-threshold}); 0: never
 * @param hugePages        Erda: the server's {@code --huge-pages} ({@code off}, or {@code thp}: pmDir on a tmpfs
 *                         mounted {@code huge=within_size}, every region populated when it is made)
 */
public record ServerSettings(String fabric, Path pmDir, long pmWriteLatencyNs, String persistence, boolean separateProcess,
                             Duration startTimeout, Path logDir, String verbsHost, long regionSize, long cleanThreshold,
                             String hugePages) {
    /** The log region size of the benchmarks' servers in steady state ({@link #steadyStateCleanThreshold}). */
    public static final long STEADY_STATE_REGION_SIZE = 64L << 20;
    /** The least clean threshold of {@link #steadyStateCleanThreshold}: three such regions per head. */
    public static final long STEADY_STATE_MIN_CLEAN_THRESHOLD = 192L << 20;

    /**
     * The clean threshold a benchmark's server runs with so that it measures a store in steady state (every protocol
     * applies into the same log; the cleaner bounds it and its retired regions are reused): at least
     * {@link #STEADY_STATE_MIN_CLEAN_THRESHOLD}, and twice the loaded records (value plus 64 bytes of key and
     * framing each), so a cleaned chain is always well under it.
     */
    public static long steadyStateCleanThreshold(long records, int valueSize) {
        return Math.max(STEADY_STATE_MIN_CLEAN_THRESHOLD, 2L * records * (valueSize + 64L));
    }

    public ServerSettings(String fabric, Path pmDir, long pmWriteLatencyNs, String persistence, boolean separateProcess,
                          Duration startTimeout, Path logDir) {
        this(fabric, pmDir, pmWriteLatencyNs, persistence, separateProcess, startTimeout, logDir, "127.0.0.1", 0, 0, "off");
    }
}
