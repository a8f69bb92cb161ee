package io.erda.fabric.shm;

import io.erda.fabric.FabricException;
import io.erda.fabric.soft.Backoff;
import java.io.IOException;
import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.nio.channels.SelectionKey;
import java.nio.channels.Selector;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.locks.ReentrantLock;

/**
 * The one thread of an shm fabric instance: it polls the inbound rings of all connected endpoints (messages,
 * acknowledgements). With nothing to do it spins, then yields, for about 100 microseconds (a busy poller is
 * never woken by a system call), then sleeps in a {@link Selector} over the connections' sockets, after
 * announcing in every inbound ring that it is asleep and looking at the rings once more (the lost-wakeup protocol
 * of {@link Ring#claimWakeup()}). A producer in any process that then publishes rings the doorbell: one byte on the
 * socket. The same selector reports a peer's EOF, so it is also the liveness watch. Its CPU time is the fabric's
 * engine CPU.
 *
 * <p><b>Inline progress.</b> A thread waiting on one of the fabric's completion queues polls the rings itself
 * ({@link #progress}) while it spins, so a round trip costs no hand-off to this thread and back on either side
 * (client thread, server worker). Rings stay single-consumer: whoever polls holds {@code consuming} (waiters only
 * try it), which also guards the endpoint list. The thread keeps what only it can do: admitting endpoints, the
 * selector (doorbells, EOF) and polling while nobody waits. Work an inline poller did while this thread sleeps is
 * not engine CPU: it is the waiter's.
 */
final class Poller {
    /**
     * Spin only briefly after the last work, then yield: on a 2-core machine the poller shares a core with the
     * threads that produce its next message, and spinning starves them (fabric-bench ping-pong: spin 20 us then
     * yield 80 us gave ~90 us p50, spin 1 us then yield 100 us ~12-19 us). A yield on an idle core costs little
     * more than a spin, so a busy poller still never sleeps between messages.
     */
    static final long SPIN_NANOS = 1_000;
    /** Then yield this long before sleeping: the most CPU an idle poller burns after its last piece of work. */
    static final long YIELD_NANOS = 100_000;
    /** Asleep while an endpoint waits on time (a message's RNR timeout) or on ring space, which ring no doorbell. */
    private static final long WAITING_SLEEP_MILLIS = 1;
    /** Look at the sockets this often while busy, so a dead peer is noticed although we never sleep. */
    private static final int BUSY_POLLS_PER_LIVENESS_CHECK = 1024;
    private static final AtomicInteger THREADS = new AtomicInteger();
    private static final ThreadMXBean THREAD_BEAN = ManagementFactory.getThreadMXBean();

    private final long idleSleepMillis;
    private final Selector selector;
    private final ConcurrentLinkedQueue<ShmEndpoint> joining = new ConcurrentLinkedQueue<>();
    /** Held by whoever consumes the inbound rings: this thread or an inline poller. */
    private final ReentrantLock consuming = new ReentrantLock();
    /** Guarded by {@code consuming}; only this thread adds. */
    private final List<ShmEndpoint> endpoints = new ArrayList<>();
    private final Thread thread;
    private volatile boolean running = true;
    private volatile long lastCpuNanos;
    private volatile long doorbellWakeups;
    /** Work inline pollers did: lets this thread see that traffic is live while it holds no ring. */
    private final java.util.concurrent.atomic.AtomicLong inlineWork = new java.util.concurrent.atomic.AtomicLong();

    /** {@code idleSleepMillis}: longest sleep with nothing waiting (0 = until a doorbell); a safety net only. */
    Poller(long idleSleepMillis) {
        this.idleSleepMillis = idleSleepMillis;
        try {
            selector = Selector.open();
        } catch (IOException e) {
            throw new FabricException("cannot open the shm poller's selector: " + e, e);
        }
        thread = Thread.ofPlatform().daemon().name("erda-shm-poller-" + THREADS.incrementAndGet()).unstarted(this::run);
        thread.start();
    }

    void add(ShmEndpoint endpoint) {
        joining.add(endpoint);
        selector.wakeup();
    }

    /** Wakes the poller if it sleeps (same process: a local event such as a receive posted for a waiting message). */
    void wakeup() {
        selector.wakeup();
    }

    private void run() {
        Backoff backoff = new Backoff(SPIN_NANOS, YIELD_NANOS);
        int polls = 0;
        try {
            while (running) {
                if (++polls % BUSY_POLLS_PER_LIVENESS_CHECK == 0) {
                    selector.selectNow();
                    readSockets();
                }
                long inlineBefore = inlineWork.get();
                // Work done by inline pollers counts as activity too: the traffic is live, and the next message
                // may arrive when they have parked, so this thread must not drift into sleep meanwhile.
                if (pollAllLocked() != 0 || inlineWork.get() != inlineBefore) {
                    backoff.reset();
                } else if (backoff.idle()) {
                    sleep();
                }
            }
        } catch (IOException | RuntimeException e) {
            System.err.println("erda-shm-poller stopped: " + e); // the endpoints are flushed by their liveness
        } finally {
            lastCpuNanos = THREAD_BEAN.getThreadCpuTime(thread.threadId());
            try {
                selector.close();
            } catch (IOException e) {
                // nothing left to release
            }
        }
    }

    /**
     * Any thread waiting for a completion of this fabric: polls every inbound ring once unless another thread is
     * polling them; returns the work done.
     */
    int progress() {
        if (!running || !consuming.tryLock()) {
            return 0;
        }
        try {
            int work = running ? pollAll() : 0;
            if (work > 0) {
                inlineWork.addAndGet(work);
            }
            return work;
        } finally {
            consuming.unlock();
        }
    }

    /**
     * This thread: admits joining endpoints and polls every ring; returns the work done, or -1 if an inline poller
     * holds the rings right now (traffic is live: the caller stays awake).
     */
    private int pollAllLocked() {
        if (!consuming.tryLock()) {
            return -1;
        }
        try {
            admitJoining();
            return pollAll();
        } finally {
            consuming.unlock();
        }
    }

    /** Holds {@code consuming}. */
    private void admitJoining() {
        ShmEndpoint e;
        while ((e = joining.poll()) != null) {
            try {
                e.connection().registerWith(selector, e);
            } catch (IOException closed) {
                e.peerGone(); // closed before we got to it: polls flush it, then it leaves
            }
            endpoints.add(e);
        }
    }

    /** Holds {@code consuming}. */
    private int pollAll() {
        int work = 0;
        for (int i = endpoints.size() - 1; i >= 0; i--) {
            int done = endpoints.get(i).poll();
            if (done < 0) {
                endpoints.remove(i);
            } else {
                work += done;
            }
        }
        return work;
    }

    /** Announce, re-check, block until a doorbell, EOF, local wakeup or timeout. */
    private void sleep() throws IOException {
        boolean waiting = false;
        int work;
        consuming.lock();
        try {
            for (ShmEndpoint e : endpoints) {
                e.connection().inbound.announceSleep();
                waiting |= e.waitsOnTime();
            }
            work = pollAll();
        } finally {
            consuming.unlock();
        }
        if (work == 0 && running && joining.isEmpty()) {
            selector.select(waiting ? WAITING_SLEEP_MILLIS : idleSleepMillis);
        }
        consuming.lock();
        try {
            for (ShmEndpoint e : endpoints) {
                e.connection().inbound.cancelSleep();
            }
        } finally {
            consuming.unlock();
        }
        readSockets();
    }

    /** Drains the doorbells of the selected sockets and turns EOFs into lost peers. */
    private void readSockets() {
        var selected = selector.selectedKeys();
        if (selected.isEmpty()) {
            return;
        }
        for (SelectionKey key : selected) {
            ShmEndpoint e = (ShmEndpoint) key.attachment();
            int rung = key.isValid() ? e.connection().drainDoorbells() : -1;
            if (rung < 0) {
                key.cancel();
                e.peerGone();
            } else if (rung > 0) {
                doorbellWakeups++; // poller thread only: the volatile is for readers
            }
        }
        selected.clear();
    }

    /** Times a doorbell (or EOF) woke or found this poller (tests check that the peer's doorbell works). */
    long doorbellWakeups() {
        return doorbellWakeups;
    }

    /** CPU time of the poller thread so far (its final value once stopped). */
    long cpuNanos() {
        long now = thread.isAlive() ? THREAD_BEAN.getThreadCpuTime(thread.threadId()) : -1;
        return now >= 0 ? now : lastCpuNanos;
    }

    Thread thread() {
        return thread;
    }

    /**
     * Stops the thread and waits out any inline poller (none starts once this returns); the endpoints it still
     * served are the caller's to release.
     */
    void stop() {
        running = false;
        selector.wakeup();
        try {
            thread.join(5_000);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        consuming.lock();
        consuming.unlock();
    }
}
