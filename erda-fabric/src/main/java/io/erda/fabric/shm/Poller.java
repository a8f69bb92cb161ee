package io.erda.fabric.shm;

import io.erda.fabric.soft.Backoff;
import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * The one thread of an shm fabric instance: it polls the inbound rings of all connected endpoints (messages,
 * acknowledgements) and backs off (spin, yield, park up to 1 ms) when none has work, so idle connections do not
 * hold a core. Its CPU time is the fabric's engine CPU.
 */
final class Poller {
    private static final AtomicInteger THREADS = new AtomicInteger();
    private static final ThreadMXBean THREAD_BEAN = ManagementFactory.getThreadMXBean();

    private final CopyOnWriteArrayList<ShmEndpoint> endpoints = new CopyOnWriteArrayList<>();
    private final Thread thread;
    private volatile boolean running = true;
    private volatile long lastCpuNanos;

    Poller() {
        thread = Thread.ofPlatform().daemon().name("erda-shm-poller-" + THREADS.incrementAndGet()).unstarted(this::run);
        thread.start();
    }

    void add(ShmEndpoint endpoint) {
        endpoints.add(endpoint);
    }

    private void run() {
        Backoff backoff = new Backoff();
        while (running) {
            int work = 0;
            for (ShmEndpoint endpoint : endpoints) {
                int done = endpoint.poll();
                if (done < 0) {
                    endpoints.remove(endpoint);
                } else {
                    work += done;
                }
            }
            if (work > 0) {
                backoff.reset();
            } else {
                backoff.idle();
            }
        }
        lastCpuNanos = THREAD_BEAN.getThreadCpuTime(thread.threadId());
    }

    /** CPU time of the poller thread so far (its final value once stopped). */
    long cpuNanos() {
        long now = thread.isAlive() ? THREAD_BEAN.getThreadCpuTime(thread.threadId()) : -1;
        return now >= 0 ? now : lastCpuNanos;
    }

    Thread thread() {
        return thread;
    }

    /** Stops the thread; the endpoints it still served are the caller's to release. */
    void stop() {
        running = false;
        java.util.concurrent.locks.LockSupport.unpark(thread);
        try {
            thread.join(5_000);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
