package io.erda.server;

import io.erda.ffm.libc.Scheduling;
import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.util.logging.Level;
import java.util.logging.Logger;

/**
 * The background validator of docs/ARCHITECTURE.md, [leases]: sleeps until the earliest lease deadline (or, with
 * nothing pending, until a reservation is made), then has the store settle every key whose newest lease expired.
 *
 * <p>It wakes at most every {@link #SETTLE_PERIOD_DIVISOR}th of a lease and settles what expired since in one
 * batch: waking for every deadline meant one wake-up (and store-lock hand-off) per PUT, on the same two cores as
 * the workers. [leases] only asks that nothing is rolled back before its lease ends; a settlement up to a quarter
 * lease later costs a longer list of pending records, not safety.
 *
 * <p>It runs at nice {@link #NICE}: a wake-up settles a quarter lease of PUTs (tens of thousands under load: 3 to 6
 * ms of CPU), and at the workers' priority the scheduler let it finish its slice while the worker a request had
 * just woken waited behind it on the same CPU (perf sched of scale-bench: the slowest inserts of a load, 3 to 6 ms,
 * were the validator's runs). At nice 10 a waking worker preempts it, and it still gets a tenth of a contended CPU,
 * several times what settling costs, so it keeps up under load.
 */
final class LeaseValidator {
    private static final Logger LOG = Logger.getLogger(LeaseValidator.class.getName());
    private static final ThreadMXBean CPU = ManagementFactory.getThreadMXBean();
    /** The validator thread's nice value (see the class comment). */
    static final int NICE = 10;
    /** Settle at most this many times per lease. */
    static final int SETTLE_PERIOD_DIVISOR = 4;

    private final Leases leases;
    private final StoreStats stats;
    private volatile boolean running = true;

    LeaseValidator(Leases leases, StoreStats stats) {
        this.leases = leases;
        this.stats = stats;
    }

    void run() {
        try {
            Scheduling.nice(NICE);
        } catch (RuntimeException | LinkageError e) { // raising a nice value needs no privilege; a seccomp profile
            // may still refuse it, or a libc without setpriority: the validator must run either way
            LOG.log(Level.WARNING, "the lease validator stays at the workers' priority: " + e);
        }
        long period = leases.leaseNanos() / SETTLE_PERIOD_DIVISOR;
        while (running) {
            try {
                long wait;
                long now = System.nanoTime();
                if (leases.hasExpired(now)) {
                    long start = CPU.getCurrentThreadCpuTime();
                    wait = leases.settleExpired(now);
                    stats.serverCpuNanos.add(CPU.getCurrentThreadCpuTime() - start);
                } else {
                    wait = leases.settleExpired(now);
                }
                leases.awaitReservation(wait < 0 ? wait : Math.max(wait, period));
            } catch (InterruptedException e) {
                continue; // stop() clears running first; an interrupt alone is not a stop (RequestServer.workLoop)
            } catch (RuntimeException e) {
                LOG.log(Level.WARNING, "lease validation failed", e);
            }
        }
    }

    void stop() {
        running = false;
    }
}
