package io.erda.fabric.soft;

/**
 * Idle strategy for polling loops that can block until a producer wakes them: spin, then yield, then tell the
 * caller to block (in whatever its producers can interrupt: a selector, a futex). Measured in time, not
 * iterations, so that what an idle poller burns after its last piece of work is bounded (spin + yield nanoseconds)
 * on any machine, while a busy one never pays a system call to be woken. Not thread-safe: one per polling thread.
 * Call {@link #reset()} whenever work was found.
 */
public final class Backoff {
    private final long spinNanos;
    private final long yieldNanos;
    private boolean idle;
    private long idleSince;

    /** Spins for {@code spinNanos}, then yields until {@code spinNanos + yieldNanos} have passed without work. */
    public Backoff(long spinNanos, long yieldNanos) {
        if (spinNanos < 0 || yieldNanos < 0) {
            throw new IllegalArgumentException("spin " + spinNanos + " ns and yield " + yieldNanos + " ns must be >= 0");
        }
        this.spinNanos = spinNanos;
        this.yieldNanos = yieldNanos;
    }

    /**
     * Called when a poll found nothing: spins or yields and returns false, or returns true (at once) once the
     * spin and yield phases are over and the caller should block. Stays true until {@link #reset()}.
     */
    public boolean idle() {
        long now = System.nanoTime();
        if (!idle) {
            idle = true;
            idleSince = now;
        }
        long idleFor = now - idleSince;
        if (idleFor < spinNanos) {
            Thread.onSpinWait();
            return false;
        }
        if (idleFor < spinNanos + yieldNanos) {
            Thread.yield();
            return false;
        }
        return true;
    }

    public void reset() {
        idle = false;
    }
}
