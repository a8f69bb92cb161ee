package io.erda.server;

import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.util.logging.Level;
import java.util.logging.Logger;

/**
 * The background validator of ARCHITECTURE rule 1: sleeps until the earliest lease deadline (or, with nothing
 * pending, until a reservation is made), then has the store settle every key whose newest lease expired.
 */
final class LeaseValidator {
    private static final Logger LOG = Logger.getLogger(LeaseValidator.class.getName());
    private static final ThreadMXBean CPU = ManagementFactory.getThreadMXBean();

    private final Store store;
    private final StoreStats stats;
    private volatile boolean running = true;

    LeaseValidator(Store store, StoreStats stats) {
        this.store = store;
        this.stats = stats;
    }

    void run() {
        while (running) {
            try {
                long wait;
                long now = System.nanoTime();
                if (store.hasExpired(now)) {
                    long start = CPU.getCurrentThreadCpuTime();
                    wait = store.settleExpired(now);
                    stats.serverCpuNanos.add(CPU.getCurrentThreadCpuTime() - start);
                } else {
                    wait = store.settleExpired(now);
                }
                store.awaitReservation(wait);
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
