package io.erda.fabric;

import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.LongAdder;
import java.util.concurrent.locks.LockSupport;

/**
 * How a thread waits for work it polls for (Agrona's {@code IdleStrategy} is the model): it spins, then yields, then
 * either parks for periods that double from a minimum to a maximum, or, for a policy without a park phase, tells the
 * caller to block in whatever its producers can wake (a selector, a queue, a monitor). The phases are measured in
 * time, not iterations, so what an idle thread burns after its last piece of work is bounded on any machine, while a
 * busy one never pays a system call to be woken.
 *
 * <p>Every wait loop of the project takes one from a {@link Policy}: a policy names its site, so that
 * {@link #counts()} can say, for a benchmark, how often the threads of each site spun, yielded, parked and blocked.
 * A policy's timings can be changed without rebuilding with the system property {@code erda.idle.NAME} set to
 * {@code SPIN,YIELD,MINPARK,MAXPARK} in nanoseconds (MAXPARK 0: no park phase, the caller blocks).
 *
 * <p>Not thread-safe: one per waiting thread (or per wait). Call {@link #reset()} whenever work was found.
 */
public final class IdleStrategy {
    private static final Map<String, Totals> TOTALS = new ConcurrentHashMap<>();

    /**
     * A site's way of waiting: {@code name} (the wait loop, for {@link #counts()} and the {@code erda.idle.NAME}
     * property), how long to spin ({@link Thread#onSpinWait()}) after the last work, then how long to yield
     * ({@link Thread#yield()}), then the first and the longest park (doubling from one to the other); no park phase
     * (longest park 0): {@link IdleStrategy#idle()} answers true and the caller blocks.
     */
    public static final class Policy {
        private final String name;
        private final long spinNanos;
        private final long yieldNanos;
        private final long minParkNanos;
        private final long maxParkNanos;
        private final Totals totals;

        private Policy(String name, long spinNanos, long yieldNanos, long minParkNanos, long maxParkNanos) {
            if (name == null || name.isBlank()) {
                throw new IllegalArgumentException("an idle policy needs a name");
            }
            if (spinNanos < 0 || yieldNanos < 0 || minParkNanos < 0 || maxParkNanos < 0) {
                throw new IllegalArgumentException("idle policy " + name + ": spin " + spinNanos + " ns, yield "
                        + yieldNanos + " ns, park " + minParkNanos + ".." + maxParkNanos + " ns must all be >= 0");
            }
            if (maxParkNanos > 0 && (minParkNanos == 0 || minParkNanos > maxParkNanos)) {
                throw new IllegalArgumentException("idle policy " + name + ": first park " + minParkNanos
                        + " ns must be > 0 and at most the longest, " + maxParkNanos + " ns");
            }
            this.name = name;
            this.spinNanos = spinNanos;
            this.yieldNanos = yieldNanos;
            this.minParkNanos = minParkNanos;
            this.maxParkNanos = maxParkNanos;
            this.totals = TOTALS.computeIfAbsent(name, n -> new Totals());
        }

        /** Spins, yields, then tells the caller to block. */
        public static Policy spinYieldThenBlock(String name, long spinNanos, long yieldNanos) {
            return configured(name, spinNanos, yieldNanos, 0, 0);
        }

        /** Spins, yields, then parks for periods doubling from {@code minParkNanos} to {@code maxParkNanos}. */
        public static Policy spinYieldThenPark(String name, long spinNanos, long yieldNanos, long minParkNanos,
                                               long maxParkNanos) {
            return configured(name, spinNanos, yieldNanos, minParkNanos, maxParkNanos);
        }

        /** Parks at once, for periods doubling from {@code minParkNanos} to {@code maxParkNanos}. */
        public static Policy park(String name, long minParkNanos, long maxParkNanos) {
            return configured(name, 0, 0, minParkNanos, maxParkNanos);
        }

        /** The timings given, or those of the system property {@code erda.idle.NAME} if it is set. */
        private static Policy configured(String name, long spin, long yield, long minPark, long maxPark) {
            String value = System.getProperty("erda.idle." + name);
            if (value == null) {
                return new Policy(name, spin, yield, minPark, maxPark);
            }
            String[] parts = value.split(",", -1);
            if (parts.length != 4) {
                throw new IllegalArgumentException("erda.idle." + name + "=" + value
                        + ": expected SPIN,YIELD,MINPARK,MAXPARK in nanoseconds");
            }
            long[] ns = new long[4];
            for (int i = 0; i < 4; i++) {
                try {
                    ns[i] = Long.parseLong(parts[i].strip());
                } catch (NumberFormatException e) {
                    throw new IllegalArgumentException("erda.idle." + name + "=" + value + ": '" + parts[i]
                            + "' is not a number of nanoseconds");
                }
            }
            return new Policy(name, ns[0], ns[1], ns[2], ns[3]);
        }

        public IdleStrategy newStrategy() {
            return new IdleStrategy(this);
        }

        public String name() {
            return name;
        }

        public long spinNanos() {
            return spinNanos;
        }

        public long yieldNanos() {
            return yieldNanos;
        }

        public long minParkNanos() {
            return minParkNanos;
        }

        public long maxParkNanos() {
            return maxParkNanos;
        }

        /** Whether {@link IdleStrategy#idle()} ever answers true (no park phase: the caller blocks). */
        public boolean blocks() {
            return maxParkNanos == 0;
        }

        @Override
        public String toString() {
            return name + " (spin " + spinNanos + " ns, yield " + yieldNanos + " ns, "
                    + (blocks() ? "then block" : "park " + minParkNanos + ".." + maxParkNanos + " ns") + ")";
        }
    }

    /** What the threads of one site did while idle, since the process started. */
    public record Counts(long spins, long yields, long parks, long blocks) { }

    private static final class Totals {
        final LongAdder spins = new LongAdder();
        final LongAdder yields = new LongAdder();
        final LongAdder parks = new LongAdder();
        final LongAdder blocks = new LongAdder();
    }

    private final Policy policy;
    private final Totals totals;
    private boolean idle;
    private boolean blockCounted;
    private long idleSince;
    private long park;
    private long spins;
    private long yields;
    private long parks;

    private IdleStrategy(Policy policy) {
        this.policy = policy;
        this.totals = policy.totals;
    }

    /**
     * Called when a poll found nothing: spins, yields or parks according to how long this thread has been idle, and
     * returns false; or, once a policy without a park phase has spun and yielded, returns true at once (the caller
     * should block) until {@link #reset()}.
     */
    public boolean idle() {
        return idle(System.nanoTime());
    }

    /** {@link #idle()} for a caller that has just read {@link System#nanoTime()} itself ({@code now}). */
    public boolean idle(long now) {
        if (!idle) {
            idle = true;
            idleSince = now;
            park = policy.minParkNanos();
        }
        long idleFor = now - idleSince;
        if (idleFor < policy.spinNanos()) {
            spins++;
            Thread.onSpinWait();
            return false;
        }
        if (idleFor < policy.spinNanos() + policy.yieldNanos()) {
            yields++;
            Thread.yield();
            return false;
        }
        if (policy.blocks()) {
            if (!blockCounted) { // once per idle period, however often the caller asks again before it blocks
                blockCounted = true;
                flush();
                totals.blocks.increment();
            }
            return true;
        }
        parks++;
        LockSupport.parkNanos(this, park);
        park = Math.min(park * 2, policy.maxParkNanos());
        return false;
    }

    /** Work was found: the next {@link #idle()} starts over with the spin phase. */
    public void reset() {
        if (idle) {
            idle = false;
            blockCounted = false;
            flush();
        }
    }

    private void flush() {
        if (spins > 0) {
            totals.spins.add(spins);
            spins = 0;
        }
        if (yields > 0) {
            totals.yields.add(yields);
            yields = 0;
        }
        if (parks > 0) {
            totals.parks.add(parks);
            parks = 0;
        }
    }

    /** Per site, what idle threads did: counted when a thread found work again or was told to block. */
    public static Map<String, Counts> counts() {
        Map<String, Counts> counts = new TreeMap<>();
        TOTALS.forEach((name, t) -> counts.put(name,
                new Counts(t.spins.sum(), t.yields.sum(), t.parks.sum(), t.blocks.sum())));
        return counts;
    }
}
