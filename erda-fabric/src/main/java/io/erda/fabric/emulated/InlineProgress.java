package io.erda.fabric.emulated;

/**
 * A provider's inline progress for {@link EmulatedCompletionQueue} waiters (libfabric's manual progress): a thread waiting
 * for a completion moves the provider's work along itself instead of waiting for an engine thread to do it and wake
 * it. The provider learns when waiters come and go, so its own engine thread can stand by while one polls instead of
 * polling the same rings beside it (on two cores, a third and fourth runnable thread halve what the two that matter
 * get).
 */
public interface InlineProgress {
    /** None: waiters only wait. */
    InlineProgress NONE = new InlineProgress() {
        @Override
        public int poll() {
            return 0;
        }

        @Override
        public void waiterArrived() {
        }

        @Override
        public void waiterLeft(boolean parking) {
        }
    };

    /** Drives the provider once and returns the work done; cheap when there is none, safe from any thread. */
    int poll();

    /** A waiter starts calling {@link #poll()} in a loop. */
    void waiterArrived();

    /**
     * The waiter stopped polling: it found its completion, or it is about to park ({@code parking}), after which only
     * the provider's own thread moves its work along: that thread must then be awake.
     */
    void waiterLeft(boolean parking);
}
