package io.erda.fabric;

import java.util.concurrent.TimeUnit;

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

    @Override
    void close();
}
