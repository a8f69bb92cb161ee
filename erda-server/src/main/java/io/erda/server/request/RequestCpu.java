package io.erda.server.request;

import io.erda.protocol.MessageType;
import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.util.concurrent.atomic.LongAdder;

/**
 * server_cpu_ns for the requests one thread serves (a worker, or a provider thread serving directly). A request is
 * charged just before its reply is posted, never after it: once answered, its client goes on, and a benchmark may
 * close or open a window of the counters (ycsb-compare reads them around each run), so a charge that landed after the
 * reply could fall into the next window (Acceptor.accept charges before it answers too). What the thread does after the
 * reply (reposting the receive buffer, freeing sent replies), and the work of a request answered from another thread
 * (a replicated PUT's executor, a CLEAN's run) or not at all, is carried to the thread's next charged reply: nothing
 * is lost but what a thread carries when it ends (a provider thread of a closed connection: one request's tail), and
 * each window edge moves at most one request's tail per thread. STATS is monitoring, not work: neither it nor its
 * tail is charged, and a carry waits for a reply that is.
 *
 * <p>A measured request is charged {@code weight} times ({@link #weight}); one not measured (weight 0) never reaches
 * this object, and its work is left to the sampled requests' weights. Only the owning thread charges; a reply posted
 * by any other thread is not this object's business.
 */
final class RequestCpu {
    private static final ThreadMXBean CPU = ManagementFactory.getThreadMXBean();
    /** Requests a thread measures exactly before it samples (so a test's single PUT is charged as it costs). */
    static final long EXACT_REQUESTS = 1024;
    /** After those, one request in this many is measured and charged this many times (see {@link #weight}). */
    static final int SAMPLE = 8;

    private final LongAdder charged;
    private final Thread owner = Thread.currentThread();
    private long weight;
    /** The thread's CPU time where the part not yet measured began. */
    private long mark;
    /** Measured (and weighted) CPU not yet charged: tails after replies, requests answered elsewhere. */
    private long carried;
    private boolean serving;
    private boolean replied;

    /**
     * How many times request number {@code served} of a thread is charged: 1 (exact), {@link #SAMPLE} or 0 (not
     * measured). The CPU clock is a system call (under a microsecond, a tenth of a PUT on shm, and a measured
     * request reads it twice on its path, at the start and at the reply), so a thread measures its first
     * {@link #EXACT_REQUESTS} requests, then one request in {@link #SAMPLE} drawn at random (a fixed stride would meet
     * a protocol's own period: Read After Write's two requests per PUT) and charges it that many times.
     */
    static long weight(long served, java.util.random.RandomGenerator random) {
        return served < EXACT_REQUESTS ? 1 : random.nextInt(SAMPLE) == 0 ? SAMPLE : 0;
    }

    /** Charges into {@code charged}; owned by the calling thread. */
    RequestCpu(LongAdder charged) {
        this.charged = charged;
    }

    /** A request's service begins, measured {@code weight} (at least 1) times. */
    void begin(long weight) {
        this.weight = weight;
        serving = true;
        replied = false;
        mark = CPU.getCurrentThreadCpuTime();
    }

    /** The reply to a request of type {@code request} is about to be posted (on any thread). */
    void beforeReply(MessageType request) {
        if (Thread.currentThread() != owner || !serving || replied) {
            return;
        }
        replied = true;
        long now = CPU.getCurrentThreadCpuTime();
        if (request != MessageType.STATS) {
            charged.add((now - mark) * weight + carried);
            carried = 0;
        }
        mark = now;
    }

    /** The service of a request of type {@code served} (null: none, e.g. a closed connection's receive) ended. */
    void end(MessageType served) {
        serving = false;
        if (served != MessageType.STATS) {
            carried += (CPU.getCurrentThreadCpuTime() - mark) * weight;
        }
    }

    /** Measured CPU not charged yet (tests). */
    long carried() {
        return carried;
    }
}
