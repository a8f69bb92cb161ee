package io.erda.core.pm;

/**
 * Emulated NVM write latency: a busy-wait of {@code nanosPerCacheLine} for every cache line a
 * store touches. The papers emulate PM on DRAM with +150 ns per written line; tests leave it off.
 *
 * @param nanosPerCacheLine added delay per written 64-byte line; 0 disables the model
 */
public record WriteLatencyModel(long nanosPerCacheLine) {
    /** Cache line size the model charges by. */
    public static final int CACHE_LINE = 64;
    /** No added latency (the default). */
    public static final WriteLatencyModel OFF = new WriteLatencyModel(0);

    public WriteLatencyModel {
        if (nanosPerCacheLine < 0) {
            throw new IllegalArgumentException("nanos per cache line " + nanosPerCacheLine + " is negative");
        }
    }

    /** Number of 64-byte lines that the byte range {@code [offset, offset+length)} touches. */
    public static long cacheLines(long offset, long length) {
        if (length <= 0) {
            return 0;
        }
        long first = Math.floorDiv(offset, CACHE_LINE);
        long last = Math.floorDiv(offset + length - 1, CACHE_LINE);
        return last - first + 1;
    }

    /**
     * A delay from which on {@link #charge} sleeps instead of spinning: 1 ms, twenty times the kernel's default
     * timer slack, so a sleep's overshoot is small against it.
     */
    public static final long SLEEP_FROM_NANOS = 1_000_000;

    /**
     * Waits the emulated cost of writing {@code [offset, offset+length)}: busy-waits, as the papers do, for what an
     * object or a word costs (far below the scheduler's resolution); sleeps for a bulk write of 1 ms and more (6,700
     * lines at 150 ns: the cleaner zeroing a retired region). Such a write is bandwidth on its own core on the machine
     * the model stands for; spinning would take a core from the requests the emulation serves (on two vCPUs, one of
     * two), which no PM machine pays. The writer still waits as long.
     */
    public void charge(long offset, long length) {
        if (nanosPerCacheLine == 0) {
            return;
        }
        long delay = nanosPerCacheLine * cacheLines(offset, length);
        long until = System.nanoTime() + delay;
        if (delay >= SLEEP_FROM_NANOS) {
            for (long left = delay; left > 0; left = until - System.nanoTime()) {
                java.util.concurrent.locks.LockSupport.parkNanos(left);
            }
            return;
        }
        while (System.nanoTime() - until < 0) {
            Thread.onSpinWait();
        }
    }
}
