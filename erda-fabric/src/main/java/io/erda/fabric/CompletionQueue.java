package io.erda.fabric;

import java.util.concurrent.TimeUnit;
import java.util.function.Predicate;

/**
 * A completion queue ({@code ibv_cq}); may be shared by several endpoints. Thread-safe.
 * Completions of one endpoint's send queue appear in posting order.
 */
public interface CompletionQueue extends AutoCloseable {

    /** The next completion, or null if none is ready. Never blocks. */
    Completion poll();

    /**
     * Waits for the next completion: spins briefly, then yields, then parks, so an idle waiter does not hold a
     * core. Returns null on timeout.
     */
    Completion take(long timeout, TimeUnit unit) throws InterruptedException;

    int capacity();

    /**
     * Offers a consumer that the provider's own threads may run on a successful receive completion instead of
     * queueing it, at a moment when queueing it would cost a wake-up: every waiter of this queue is parked, none
     * spins, and nothing is queued. The consumer then stands in for one parked waiter (at most as many run at once as
     * waiters are parked); it returns false to decline, and the completion is queued as usual. It runs on a thread
     * that also delivers the same endpoint's later receives, so it must not wait for one of them.
     *
     * <p>A provider whose completions come from a device (verbs) has no thread to run it on and returns false; the
     * tcp provider's {@code createCompletionQueue} queues return true (their receives are delivered by the thread
     * that reads the peer's requests from the socket).
     */
    default boolean consumeWhenIdle(Predicate<Completion> consumer) {
        return false;
    }

    @Override
    void close();
}
