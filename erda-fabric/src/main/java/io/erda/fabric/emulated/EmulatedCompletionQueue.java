package io.erda.fabric.emulated;

import io.erda.fabric.Completion;
import io.erda.fabric.CompletionQueue;
import io.erda.fabric.IdleStrategy;

import java.util.Objects;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.locks.LockSupport;
import java.util.function.Predicate;

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
 *
 * <p><b>Direct delivery.</b> A queue made with {@link #withDirectDelivery} accepts a consumer
 * ({@link #consumeWhenIdle}) that the provider's thread runs itself on a successful completion it
 * {@link #deliver}s while every waiter is parked (and none spins, and nothing is queued): the completion then costs no
 * wake-up. A parked waiter's wake-up is the expensive part of a hand-off (tcp: 10 to 30 us on these machines, against
 * a READ round trip of 30 us), and a server worker is parked whenever requests are rarer than its yield window: in
 * YCSB B, for most PUTs. Each run borrows one parked waiter's turn, so no more consumers run at once than waiters
 * are parked; a completion delivered from within a run is queued.
 */
public final class EmulatedCompletionQueue implements CompletionQueue {
    /** Spin briefly, then yield: spinning waiters starve the threads that complete their work on 2 cores. */
    private static final long SPIN_NANOS = 1_000;
    /**
     * Yield this long before parking when other threads complete the work (tcp: its reader threads). A server
     * worker waits here for its next request: in YCSB A a PUT's reservation request comes after the previous PUT's
     * WRITE and a GET or two (80 to 140 us), and a shorter window parked the worker before most of them, so the PUT
     * paid its wake-up (docs/MEASUREMENTS.md, "Idle strategies").
     */
    private static final long YIELD_NANOS = 200_000;
    /**
     * Yield this long before parking when the waiter completes the work itself ({@link InlineProgress}: shm). A parked
     * waiter costs the completion that ends its wait a wake-up chain (the shm poller woken, the waiter unparked, on a
     * VM an idle vCPU woken by the host): 10 to 60 us, and milliseconds now and then; under YCSB B a server worker
     * waits a PUT every 30 to 100 us. Where other threads complete the work (tcp) so long a window hurts: the yielding
     * waiters keep the cores the readers need (docs/MEASUREMENTS.md, "Idle strategies").
     */
    private static final long INLINE_YIELD_NANOS = 1_000_000;
    private static final IdleStrategy.Policy WAIT =
            IdleStrategy.Policy.spinYieldThenBlock("emulated-cq", SPIN_NANOS, YIELD_NANOS);
    private static final IdleStrategy.Policy INLINE_WAIT =
            IdleStrategy.Policy.spinYieldThenBlock("emulated-cq-inline", SPIN_NANOS, INLINE_YIELD_NANOS);
    private final ConcurrentLinkedQueue<Completion> queue = new ConcurrentLinkedQueue<>();
    private final Set<Thread> parked = ConcurrentHashMap.newKeySet();
    private final AtomicInteger parkedCount = new AtomicInteger();
    private final int capacity;
    private final InlineProgress progress;
    /** How a waiter spins and yields before it parks. */
    private final IdleStrategy.Policy waitPolicy;
    /** Whether {@link #consumeWhenIdle} is honoured (the provider delivers receives with {@link #deliver}). */
    private final boolean directDelivery;
    private volatile Predicate<Completion> direct;
    /** Waiters spinning or yielding: a completion queued now is taken without a wake-up. */
    private final AtomicInteger spinning = new AtomicInteger();
    /** Parked waiters' turns taken by direct runs in progress. */
    private final AtomicInteger borrowed = new AtomicInteger();
    private static final ThreadLocal<Boolean> IN_DIRECT_RUN = ThreadLocal.withInitial(() -> false);

    public EmulatedCompletionQueue(int capacity) {
        this(capacity, InlineProgress.NONE);
    }

    /** {@code progress}: what waiters drive while they spin and yield (see the class comment). */
    public EmulatedCompletionQueue(int capacity, InlineProgress progress) {
        this(capacity, progress, false);
    }

    private EmulatedCompletionQueue(int capacity, InlineProgress progress, boolean directDelivery) {
        if (capacity <= 0) {
            throw new IllegalArgumentException("completion queue capacity " + capacity + " must be positive");
        }
        this.capacity = capacity;
        this.progress = progress;
        this.waitPolicy = progress == InlineProgress.NONE ? WAIT : INLINE_WAIT;
        this.directDelivery = directDelivery;
    }

    /** A queue whose provider delivers receives with {@link #deliver} and so honours {@link #consumeWhenIdle} (tcp). */
    public static EmulatedCompletionQueue withDirectDelivery(int capacity) {
        return new EmulatedCompletionQueue(capacity, InlineProgress.NONE, true);
    }

    @Override
    public boolean consumeWhenIdle(Predicate<Completion> consumer) {
        if (!directDelivery) {
            return false;
        }
        direct = Objects.requireNonNull(consumer, "consumer");
        return true;
    }

    /**
     * Delivers a receive completion (provider side): runs the {@link #consumeWhenIdle} consumer on it here, on the
     * calling thread, if every waiter is parked with a turn to spare, none spins and nothing is queued, and the
     * consumer accepts it; otherwise {@link #add}s it. True if the consumer took it.
     */
    public boolean deliver(Completion completion) {
        Predicate<Completion> consumer = direct;
        if (consumer != null && completion.isSuccess() && spinning.get() == 0 && queue.isEmpty()
                && !IN_DIRECT_RUN.get() && borrowTurn()) {
            IN_DIRECT_RUN.set(true);
            try {
                if (consumer.test(completion)) {
                    return true;
                }
            } finally {
                IN_DIRECT_RUN.set(false);
                borrowed.decrementAndGet();
            }
        }
        add(completion);
        return false;
    }

    private boolean borrowTurn() {
        while (true) {
            int b = borrowed.get();
            if (b >= parkedCount.get()) {
                return false;
            }
            if (borrowed.compareAndSet(b, b + 1)) {
                return true;
            }
        }
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
        long waitNanos = waitPolicy.spinNanos() + waitPolicy.yieldNanos(); // also while the waiter drives progress
        progress.waiterArrived();
        spinning.incrementAndGet();
        boolean found = false;
        IdleStrategy idle = waitPolicy.newStrategy();
        try {
            // one clock read per pass: the bound's is the idle strategy's too
            for (long now = start; now - start < waitNanos; now = System.nanoTime()) {
                if (progress.poll() == 0 && idle.idle(now)) {
                    break; // spun and yielded: park below
                }
                c = queue.poll();
                if (c != null) {
                    found = true;
                    return c;
                }
            }
        } finally {
            idle.reset(); // its counts, whichever way the spin ended
            spinning.decrementAndGet();
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
