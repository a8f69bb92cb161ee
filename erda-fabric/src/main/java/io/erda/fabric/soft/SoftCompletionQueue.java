package io.erda.fabric.soft;

import io.erda.fabric.Completion;
import io.erda.fabric.CompletionQueue;

import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.locks.LockSupport;

/**
 * The completion queue of the software providers: a lock-free queue filled by engine or poster threads. A waiter
 * spins (1 us) and yields (200 us; 1 ms if it drives the provider's progress itself) first, then parks and is
 * unparked by the next {@link #add}. Unbounded: the endpoints' queue depths bound what can be outstanding, and the
 * capacity is advisory, as a CQ sized by the sum of its queues.
 *
 * <p><b>Inline progress.</b> A provider may give the queue an {@link InlineProgress} that a waiter drives while it
 * spins and yields: the waiting thread then moves the provider's work along itself (the shm provider: it consumes
 * the inbound rings) instead of waiting for an engine thread to do it and wake it. The waiter says when it starts
 * and when it stops (before it parks), so the provider's thread can stand by meanwhile.
 */
public final class SoftCompletionQueue implements CompletionQueue {
    /** Spin briefly, then yield: spinning waiters starve the threads that complete their work on 2 cores. */
    private static final long SPIN_NANOS = 1_000;
    /**
     * Yield this long before parking when other threads complete the work (tcp: its reader threads). A server
     * worker waits here for its next request: in YCSB A a PUT's reservation request comes after the previous PUT's
     * WRITE and a GET or two (80 to 140 us), and with 50 us the worker had parked before most of them and the PUT
     * paid its wake-up. store-bench --latency-check --fabrics tcp, two back-to-back pairs of 3 rounds, medians: PUT
     * (A) / READ 2.79 and 2.82 with 200 us against 3.16 and 3.20 with 50 us, PUT (B) / READ 2.76 and 2.76 against
     * 3.13 and 3.32, READ 26.7 to 28.0 us and GET (C) / READ 2.02 to 2.15 in all four.
     */
    private static final long YIELD_NANOS = 200_000;
    /**
     * Yield this long before parking when the waiter completes the work itself ({@link InlineProgress}: shm). A parked
     * waiter costs the completion that ends its wait a wake-up chain (the shm poller woken, the waiter unparked, on a
     * VM an idle vCPU woken by the host): 10 to 60 us, and milliseconds now and then. A server worker waits for its
     * next request here, and under YCSB B (one PUT in 20 operations, a PUT every 30 to 100 us) it parked before about
     * a third of them with 50 us: update mean 16.1 us, p99.9 502 us; with 1 ms, 9.8 to 11.8 us and 191 to 326 us
     * (ycsb-compare, shm, three runs). Where other threads complete the work the long window hurts: the yielding waiters keep both cores, and
     * the woken tcp readers wait for them (store-bench, tcp READ round trip 27 to 34 us with 1 ms).
     */
    private static final long INLINE_YIELD_NANOS = 1_000_000;
    private final ConcurrentLinkedQueue<Completion> queue = new ConcurrentLinkedQueue<>();
    private final Set<Thread> parked = ConcurrentHashMap.newKeySet();
    private final AtomicInteger parkedCount = new AtomicInteger();
    private final int capacity;
    private final InlineProgress progress;
    /** Spin and yield this long before parking. */
    private final long waitNanos;

    public SoftCompletionQueue(int capacity) {
        this(capacity, InlineProgress.NONE);
    }

    /** {@code progress}: what waiters drive while they spin and yield (see the class comment). */
    public SoftCompletionQueue(int capacity, InlineProgress progress) {
        if (capacity <= 0) {
            throw new IllegalArgumentException("completion queue capacity " + capacity + " must be positive");
        }
        this.capacity = capacity;
        this.progress = progress;
        this.waitNanos = SPIN_NANOS + (progress == InlineProgress.NONE ? YIELD_NANOS : INLINE_YIELD_NANOS);
    }

    /** Delivers a completion (provider side). */
    public void add(Completion completion) {
        queue.add(completion);
        if (parkedCount.get() > 0) {
            for (Thread t : parked) {
                LockSupport.unpark(t);
            }
        }
    }

    @Override
    public Completion poll() {
        return queue.poll();
    }

    @Override
    public Completion take(long timeout, TimeUnit unit) throws InterruptedException {
        Completion c = queue.poll();
        if (c != null) {
            return c;
        }
        long start = System.nanoTime();
        long deadline = start + unit.toNanos(timeout);
        progress.waiterArrived();
        boolean found = false;
        try {
            for (long now = start; now - start < waitNanos; now = System.nanoTime()) {
                if (progress.poll() == 0) {
                    if (now - start < SPIN_NANOS) {
                        Thread.onSpinWait();
                    } else {
                        Thread.yield();
                    }
                }
                c = queue.poll();
                if (c != null) {
                    found = true;
                    return c;
                }
            }
        } finally {
            progress.waiterLeft(!found);
        }
        Thread me = Thread.currentThread();
        parked.add(me);
        parkedCount.incrementAndGet();
        try {
            while (true) {
                c = queue.poll();
                if (c != null) {
                    return c;
                }
                long left = deadline - System.nanoTime();
                if (left <= 0) {
                    return null;
                }
                if (Thread.interrupted()) {
                    throw new InterruptedException();
                }
                LockSupport.parkNanos(this, Math.min(left, 10_000_000L));
            }
        } finally {
            parked.remove(me);
            parkedCount.decrementAndGet();
        }
    }

    @Override
    public int capacity() {
        return capacity;
    }

    public int size() {
        return queue.size();
    }

    @Override
    public void close() {
        queue.clear();
    }
}
