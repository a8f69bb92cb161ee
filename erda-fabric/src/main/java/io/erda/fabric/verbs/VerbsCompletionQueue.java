package io.erda.fabric.verbs;

import io.erda.fabric.Completion;
import io.erda.fabric.CompletionQueue;
import io.erda.fabric.Opcode;
import io.erda.fabric.IdleStrategy;
import io.erda.ffm.verbs.WorkCompletions;
import java.lang.foreign.Arena;
import java.util.ArrayDeque;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * An {@code ibv_cq}, polled by the threads that wait on it: there is no poller thread. {@link #poll()} takes a
 * batch with ibv_poll_cq, translates each entry through the endpoint that owns its QP (send-side wr_ids index the
 * endpoint's ring of posted requests, which restores the caller's wrId and opcode, and hides completions of
 * requests the provider signalled for itself) and hands them out one by one. {@link #take} polls once, then
 * {@code verbs.poll-spin-polls} more times back to back, then as its {@link IdleStrategy} says: it yields between polls
 * (up to 1 ms), then parks up to 1 ms between polls, so an idle waiter gives its core back.
 * (A completion channel would let an idle waiter sleep in the kernel instead; polling keeps one code path for every
 * device, and the software RNIC has no channel.)
 */
final class VerbsCompletionQueue implements CompletionQueue {
    private static final int BATCH = 16;
    private static final long MIN_PARK_NANOS = 1_000;
    private static final long MAX_PARK_NANOS = 1_000_000;
    // After its polls back to back, a waiter yields between polls for up to 1 ms, then parks between them (1 µs
    // doubling to 1 ms). No time-based spin unless verbs.poll-spin-ns asks for one (dedicated cores): rxe processes
    // READ responses and acknowledgements in a softirq that a spinning thread on the same CPU holds off, and a park
    // costs a timer wake-up (tens of µs, far more in a VM) per completion. docs/verbs.md, "How a waiter polls", has
    // the measurements.
    private static final long YIELD_NANOS = 1_000_000;

    private final VerbsFabric fabric;
    /** How a waiter waits once its back-to-back polls found nothing (there is no completion channel to block on). */
    private final IdleStrategy.Policy idle;
    private final io.erda.ffm.verbs.IbvCompletionQueue cq;
    private final int capacity;
    private final Arena arena = Arena.ofShared();
    private final WorkCompletions batch; // guarded by this
    /** Translated completions not yet handed out; a send completion keeps its endpoint's slot until handed out. */
    private final ArrayDeque<Entry> ready = new ArrayDeque<>(); // guarded by this

    /** A completion ready to hand out; {@code slotOwner} is the endpoint whose send-queue slot it holds, or null. */
    private record Entry(Completion completion, VerbsEndpoint slotOwner) {}
    private final AtomicBoolean closed = new AtomicBoolean();
    /** The endpoint that made this queue for itself is destroyed: close once the translated completions are out. */
    private volatile boolean closeWhenEmpty;

    VerbsCompletionQueue(VerbsFabric fabric, io.erda.ffm.verbs.IbvCompletionQueue cq, int capacity) {
        this.fabric = fabric;
        this.cq = cq;
        this.capacity = capacity;
        this.batch = new WorkCompletions(arena, BATCH);
        this.idle = IdleStrategy.Policy.spinYieldThenPark("verbs-cq", fabric.pollSpinNanos(), YIELD_NANOS, MIN_PARK_NANOS,
                MAX_PARK_NANOS);
    }

    VerbsFabric fabric() {
        return fabric;
    }

    io.erda.ffm.verbs.IbvCompletionQueue nativeQueue() {
        return cq;
    }

    /** Completions the provider makes itself (work posted before connect), in line with the polled ones. */
    synchronized void deliver(Completion completion) {
        ready.add(new Entry(completion, null)); // never posted to the QP: holds no slot
    }

    @Override
    public Completion poll() {
        Completion c = pollLocked();
        if (closeWhenEmpty) {
            closeIfEmpty();
        }
        fabric.destroyDrained(); // closed endpoints whose last completion this poll translated
        return c;
    }

    /**
     * Its endpoint is destroyed: the queue closes now, or, if completions it translated are still to be handed out
     * (flushed requests of the closed endpoint), once its owner has polled them.
     */
    void ownerDestroyed() {
        closeWhenEmpty = true;
        closeIfEmpty();
    }

    private void closeIfEmpty() {
        boolean empty;
        synchronized (this) {
            empty = ready.isEmpty();
        }
        if (empty) {
            close();
        }
    }

    private synchronized Completion pollLocked() {
        Entry e = ready.poll();
        if (e == null) {
            return drainNative(true);
        }
        if (e.slotOwner() != null) {
            e.slotOwner().handedOut();
        }
        return e.completion();
    }

    /**
     * Moves whatever the native CQ holds into the ready list (hidden completions retire their requests on the way):
     * what an endpoint does when its send queue looks full, and a guard against overrunning the native CQ.
     */
    void progress() {
        synchronized (this) {
            drainNative(false);
        }
        fabric.destroyDrained();
    }

    /**
     * Polls the native CQ dry. With {@code handOut} the first completion it translates is returned to the caller
     * instead of queued (the common case of one completion, with nothing queued before it: no list entry made);
     * the rest go to the ready list.
     */
    private Completion drainNative(boolean handOut) {
        if (closed.get()) {
            return null;
        }
        Completion first = null;
        int n;
        do {
            n = cq.poll(batch);
            for (int i = 0; i < n; i++) {
                Completion c = fabric.translate(batch, i);
                if (c != null) {
                    boolean send = c.opcode() != Opcode.RECV && c.opcode() != Opcode.RECV_WITH_IMM;
                    VerbsEndpoint slotOwner = send ? (VerbsEndpoint) c.endpoint() : null;
                    if (handOut && first == null) {
                        first = c;
                        if (slotOwner != null) {
                            slotOwner.handedOut();
                        }
                    } else {
                        ready.add(new Entry(c, slotOwner));
                    }
                }
            }
        } while (n == BATCH);
        return first;
    }

    @Override
    public Completion take(long timeout, TimeUnit unit) throws InterruptedException {
        Completion c = poll();
        if (c != null) {
            return c; // no clock read, no backoff: what a waiter whose completion is already there pays
        }
        long deadline = System.nanoTime() + unit.toNanos(timeout);
        for (int i = fabric.pollSpinPolls(); i > 0; i--) {
            // back to back, without Thread.onSpinWait: PAUSE costs more than a poll under emulation
            if ((c = poll()) != null) {
                return c;
            }
        }
        IdleStrategy waiting = idle.newStrategy();
        try {
            while (true) {
                if (System.nanoTime() - deadline >= 0) {
                    return null;
                }
                if (Thread.interrupted()) {
                    throw new InterruptedException();
                }
                waiting.idle();
                c = poll();
                if (c != null) {
                    return c;
                }
            }
        } finally {
            waiting.reset();
        }
    }

    @Override
    public int capacity() {
        return capacity;
    }

    /** Destroys the ibv_cq; the fabric calls it after the QPs that use it are gone. */
    @Override
    public void close() {
        if (closed.compareAndSet(false, true)) {
            fabric.queueClosing(this);
            synchronized (this) {
                ready.clear();
                cq.close();
            }
            arena.close();
        }
    }
}
