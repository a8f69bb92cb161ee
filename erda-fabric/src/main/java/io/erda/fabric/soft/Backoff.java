package io.erda.fabric.soft;

import java.util.concurrent.locks.LockSupport;

/**
 * Idle strategy for polling loops: spin, then yield, then park with a growing timeout, so that an idle poller
 * gives its core back (this project's machines have two) while a busy one stays in the microsecond range.
 * Not thread-safe: one per polling thread. Call {@link #reset()} whenever work was found.
 */
public final class Backoff {
    private static final int SPINS = 200;
    private static final int YIELDS = 50;
    private static final long MIN_PARK_NANOS = 1_000;
    private final long maxParkNanos;
    private int idleCount;
    private long parkNanos = MIN_PARK_NANOS;

    public Backoff() {
        this(1_000_000);
    }

    public Backoff(long maxParkNanos) {
        this.maxParkNanos = maxParkNanos;
    }

    public void idle() {
        int n = idleCount++;
        if (n < SPINS) {
            Thread.onSpinWait();
        } else if (n < SPINS + YIELDS) {
            Thread.yield();
        } else {
            LockSupport.parkNanos(this, parkNanos);
            parkNanos = Math.min(parkNanos * 2, maxParkNanos);
        }
    }

    public void reset() {
        idleCount = 0;
        parkNanos = MIN_PARK_NANOS;
    }
}
