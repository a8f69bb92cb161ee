package io.erda.server;

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
 */
final class LeaseValidator {
    private static final Logger LOG = Logger.getLogger(LeaseValidator.class.getName());
    private static final ThreadMXBean CPU = ManagementFactory.getThreadMXBean();
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
                return;
            } catch (RuntimeException e) {
                LOG.log(Level.WARNING, "lease validation failed", e);
            }
        }
    }

    void stop() {
        running = false;
    }
}
