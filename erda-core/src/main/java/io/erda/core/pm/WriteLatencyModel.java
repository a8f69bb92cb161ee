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

    /** Busy-waits for the emulated cost of writing {@code [offset, offset+length)}. */
    public void charge(long offset, long length) {
        if (nanosPerCacheLine == 0) {
            return;
        }
        // busy-wait, not sleep: the delay is far below the scheduler's resolution
        long until = System.nanoTime() + nanosPerCacheLine * cacheLines(offset, length);
        while (System.nanoTime() - until < 0) {
            Thread.onSpinWait();
        }
    }
}
