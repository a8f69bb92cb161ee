package io.erda.server.store;

import io.erda.ffm.libc.Scheduling;
import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.util.List;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.RejectedExecutionException;
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
 * <p><b>Two threads, two priorities.</b> A wake-up settles a quarter lease of PUTs (tens of thousands under load:
 * 3 to 6 ms of CPU). At the workers' priority the scheduler lets the validator finish its slice while the worker a
 * request has just woken waits behind it on the same CPU. At nice {@link #NICE} a waking worker preempts it; but a
 * validator at nice 10 that the scheduler preempts while it holds the store lock leaves the worker that then wants
 * the lock waiting for a tenth of a contended CPU (milliseconds). So the work is split by whether it holds the
 * lock: this thread, at the workers' priority, takes each batch of due reservations and drops or settles them under
 * the lock (short holds, between which it lets queued workers in and yields); the checks of their objects (a CRC
 * over each, the bulk of the CPU) run without the lock on a checker thread at nice {@link #NICE}, which a waking
 * worker preempts.
 */
public final class LeaseValidator {
    private static final Logger LOG = Logger.getLogger(LeaseValidator.class.getName());
    private static final ThreadMXBean CPU = ManagementFactory.getThreadMXBean();
    /** The checker thread's nice value (see the class comment). */
    static final int NICE = 10;
    /** The checker thread's name (its kernel name, /proc's comm, is the first 15 characters). */
    static final String CHECKER_NAME = "erda-lease-checker";
    /** Settle at most this many times per lease. */
    static final int SETTLE_PERIOD_DIVISOR = 4;

    private final Leases leases;
    private final StoreStats stats;
    private volatile boolean running = true;

    /** The validator of {@code store}'s reservations; {@link #run} is its thread's body. */
    public LeaseValidator(Store store, StoreStats stats) {
        this(store.leases(), stats);
    }

    LeaseValidator(Leases leases, StoreStats stats) {
        this.leases = leases;
        this.stats = stats;
    }

    public void run() {
        ExecutorService checker = Executors.newSingleThreadExecutor(task -> Thread.ofPlatform().daemon().name(CHECKER_NAME)
                .unstarted(() -> {
                    try {
                        Scheduling.nice(NICE);
                    } catch (RuntimeException | LinkageError e) { // raising a nice value needs no privilege; a
                        // seccomp profile may still refuse it, or a libc without setpriority: checks run either way
                        LOG.log(Level.WARNING, "the lease checker stays at the workers' priority: " + e);
                    }
                    task.run();
                }));
        Leases.ObjectChecks checks = (due, complete) -> check(checker, due, complete);
        long period = leases.leaseNanos() / SETTLE_PERIOD_DIVISOR;
        try {
            while (running) {
                try {
                    long wait;
                    long now = System.nanoTime();
                    if (leases.hasExpired(now)) {
                        long start = CPU.getCurrentThreadCpuTime();
                        wait = leases.settleExpired(now, checks);
                        stats.serverCpuNanos.add(CPU.getCurrentThreadCpuTime() - start);
                    } else {
                        wait = leases.settleExpired(now, checks);
                    }
                    leases.awaitReservation(wait < 0 ? wait : Math.max(wait, period));
                } catch (InterruptedException e) {
                    continue; // stop() clears running first; an interrupt alone is not a stop (Workers.workLoop)
                } catch (RuntimeException e) {
                    LOG.log(Level.WARNING, "lease validation failed", e);
                }
            }
        } finally {
            checker.shutdownNow();
        }
    }

    /**
     * One batch's object checks on the checker thread; this thread waits for them. They are always finished before
     * it returns, whatever interrupts it meanwhile (the caller goes on with the results and the batch's arrays), and
     * run here if the checker cannot take them or failed. Only this thread shuts the checker down, after its last
     * batch, so no batch of it waits in the checker's queue then.
     */
    private void check(ExecutorService checker, List<Reservation> due, boolean[] complete) {
        Future<?> done;
        try {
            done = checker.submit(() -> {
                long start = CPU.getCurrentThreadCpuTime();
                leases.checkHere(due, complete);
                stats.serverCpuNanos.add(CPU.getCurrentThreadCpuTime() - start);
            });
        } catch (RejectedExecutionException stopping) {
            leases.checkHere(due, complete);
            return;
        }
        boolean interrupted = false;
        try {
            while (true) {
                try {
                    done.get();
                    return;
                } catch (InterruptedException e) {
                    interrupted = true; // the checker may still be writing complete[]: wait for it all the same
                } catch (ExecutionException failed) {
                    LOG.log(Level.WARNING, "lease checks failed on the checker thread; checking here", failed.getCause());
                    leases.checkHere(due, complete);
                    return;
                }
            }
        } finally {
            if (interrupted) {
                Thread.currentThread().interrupt();
            }
        }
    }

    public void stop() {
        running = false;
    }
}
