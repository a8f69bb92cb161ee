package io.erda.fabric.shm;

import io.erda.fabric.FabricException;
import io.erda.fabric.IdleStrategy;
import java.io.IOException;
import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.nio.channels.SelectionKey;
import java.nio.channels.Selector;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.locks.LockSupport;
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
 *
 * <p><b>Standing by.</b> While a waiter polls inline (the fabric counts them: {@code InlineProgress}) this
 * thread has nothing to add, so it parks ({@link #STANDBY_NANOS} at most) instead of spinning and yielding beside it:
 * on two cores the client's and the server's pollers would otherwise be two more runnable threads next to the client
 * thread and the server worker, racing them for every record (docs/MEASUREMENTS.md, "Idle strategies"). A waiter
 * that gives up and parks unparks it first; one that found its completion does not (that would put a wake-up on every operation), so a message that arrives when no
 * waiter polls any more waits at most {@link #STANDBY_NANOS} for this thread, which then resumes its spin, yield and
 * sleep. Endpoints joining and stopping unpark it too.
 */
final class Poller {
    /**
     * Spin only briefly after the last work, then yield: on a 2-core machine the poller shares a core with the
     * threads that produce its next message, and spinning starves them. A yield on an idle core costs little more
     * than a spin, so a busy poller still never sleeps between messages.
     */
    static final long SPIN_NANOS = 1_000;
    /** Then yield this long before sleeping: the most CPU an idle poller burns after its last piece of work. */
    static final long YIELD_NANOS = 100_000;
    private static final IdleStrategy.Policy IDLE =
            IdleStrategy.Policy.spinYieldThenBlock("shm-poller", SPIN_NANOS, YIELD_NANOS);
    /**
     * Longest park while a waiter polls inline: what a message may wait if it arrives after the last waiter left
     * without parking (it found its completion), and the period of this thread's wake-ups meanwhile. Each wake-up
     * lands on a core that a client thread or a server worker is using, so a short period costs every PUT
     * (docs/MEASUREMENTS.md, "Idle strategies"). 1 ms matches how long a waiter that drives the rings yields before it parks and unparks this thread
     * ({@code EmulatedCompletionQueue}): a message nobody polls for is rare, and waits no longer than that.
     */
    static final long STANDBY_NANOS = 1_000_000;
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
    private volatile long recordsHandled;
    /** Threads polling inline right now: the fabric counts them as they come and go. */
    private final AtomicInteger inlineWaiters;
    /** Set while this thread parks because a waiter polls: a waiter about to park must unpark it. */
    private volatile boolean standingBy;

    /** {@code idleSleepMillis}: longest sleep with nothing waiting (0 = until a doorbell); a safety net only.
     * {@code inlineWaiters}: the fabric's count of threads polling inline. */
    Poller(long idleSleepMillis, AtomicInteger inlineWaiters) {
        this.idleSleepMillis = idleSleepMillis;
        this.inlineWaiters = inlineWaiters;
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
        LockSupport.unpark(thread); // only this thread admits endpoints: not after a whole stand-by
    }

    /**
     * Wakes the poller if it sleeps (same process: a local event such as a receive posted for a waiting message).
     * Not from a stand-by: the waiter that polls meanwhile sees the event as well.
     */
    void wakeup() {
        selector.wakeup();
    }

    /** The last thread polling inline is about to park: this thread must not stay parked standing by. */
    void lastWaiterParks() {
        if (standingBy) {
            LockSupport.unpark(thread);
        }
    }

    private void run() {
        IdleStrategy backoff = IDLE.newStrategy();
        int polls = 0;
        try {
            while (running) {
                if (++polls % BUSY_POLLS_PER_LIVENESS_CHECK == 0) {
                    selector.selectNow();
                    readSockets();
                }
                int work = pollAllLocked();
                if (work > 0) {
                    recordsHandled += work; // this thread only: the volatile is for readers
                    backoff.reset();
                } else if (inlineWaiters.get() > 0) {
                    standBy();
                    backoff.reset(); // the waiters may have left for good: a whole spin and yield before sleeping
                } else if (work < 0) {
                    backoff.reset(); // someone polls the rings this moment: traffic is live
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
            return running ? pollAll() : 0;
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

    /** Parks while a waiter polls inline (class comment, "Standing by"). */
    private void standBy() {
        standingBy = true;
        try {
            if (inlineWaiters.get() > 0 && running && joining.isEmpty()) {
                LockSupport.parkNanos(this, STANDBY_NANOS);
            }
        } finally {
            standingBy = false;
        }
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

    /** Inbound records this thread handled, not counting its sleeps' (tests check it stands by for waiters). */
    long recordsHandled() {
        return recordsHandled;
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
        LockSupport.unpark(thread);
        try {
            thread.join(5_000);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        consuming.lock();
        consuming.unlock();
    }
}
