package io.erda.history;

import io.erda.history.Operation.Kind;
import java.util.Arrays;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * The Wing &amp; Gong search for a linearization of one register's history, with Lowe's memoisation (Lowe, "Testing
 * for linearizability", 2017; the algorithm of Knossos' {@code linear} checker and of Porcupine): the operations'
 * calls and returns in one time-ordered list; walking it, a call whose operation the register allows in its current
 * state is linearized (lifted out of the list with its return) unless that (set of linearized operations, register
 * value) was reached before; reaching a return means the operations linearized so far cannot be followed by that
 * operation in time, so the last choice is undone. The history is linearizable when the list empties, and not when a
 * return is reached with nothing left to undo. Where call and return are at the same nanosecond the call goes first:
 * the two operations are taken as concurrent.
 *
 * <p>An operation that may have taken effect or not returns at +infinity: linearized last, its effect is never seen,
 * which is the same as never having happened. But where it is the only write of its value and a read returned that
 * value, it returns when the first such read does: no linearization can put it later, and an indeterminate write left
 * open to the end would be concurrent with everything after it, which makes the search exponential in their number.
 *
 * <p>The cache holds a bitset per state it has seen; besides the budget of steps, a search stops, unknown, when the
 * cache would hold more than {@link #MAX_CACHE_WORDS} words, so that one long key cannot exhaust the heap.
 */
final class RegisterSearch {
    enum Verdict { LINEARIZABLE, NOT_LINEARIZABLE, UNKNOWN }

    /**
     * What the search found; for a history that is not linearizable, where the longest linearizable prefix it found
     * ended: {@code blocked} could not come next, the register then held {@code registerValue}, written by
     * {@code lastWrite} (null: the initial value), after {@code linearized} operations.
     */
    record Outcome(Verdict verdict, long steps, Operation blocked, long registerValue, Operation lastWrite,
                   int linearized) {
    }

    /** 64-bit words of cached bitsets one search may hold: 256 MiB. */
    static final long MAX_CACHE_WORDS = 1L << 25;

    private RegisterSearch() {
    }

    /** Searches {@code ops} (one key's, none failed, every read {@code OK}) in at most {@code maxSteps} steps. */
    static Outcome run(List<Operation> ops, long maxSteps) {
        int n = ops.size();
        int head = 2 * n;
        int tail = head + 1;
        int[] opOf = new int[2 * n];
        boolean[] isCall = new boolean[2 * n];
        int[] match = new int[2 * n];
        int[] next = new int[2 * n + 2];
        int[] prev = new int[2 * n + 2];
        long[] returnAt = returns(ops);
        Integer[] order = new Integer[2 * n];
        for (int i = 0; i < 2 * n; i++) {
            order[i] = i;
        }
        // event e: 2i is operation i's call, 2i + 1 its return; calls first at equal times
        Arrays.sort(order, (a, b) -> {
            int byTime = Long.compare(time(ops, returnAt, a), time(ops, returnAt, b));
            return byTime != 0 ? byTime : Integer.compare(a & 1, b & 1);
        });
        int[] nodeOfEvent = new int[2 * n];
        for (int node = 0; node < 2 * n; node++) {
            int e = order[node];
            nodeOfEvent[e] = node;
            opOf[node] = e >> 1;
            isCall[node] = (e & 1) == 0;
        }
        for (int i = 0; i < n; i++) {
            match[nodeOfEvent[2 * i]] = nodeOfEvent[2 * i + 1];
        }
        int last = head;
        for (int node = 0; node < 2 * n; node++) {
            next[last] = node;
            prev[node] = last;
            last = node;
        }
        next[last] = tail;
        prev[tail] = last;

        long[] linearized = new long[(n + 63) >>> 6];
        Set<CacheEntry> cache = new HashSet<>();
        int[] stackNode = new int[n];
        long[] stackValue = new long[n];
        int[] stackWriter = new int[n];
        int depth = 0;
        long value = Operation.ABSENT;
        int writer = -1;
        int bestDepth = -1;
        int blocked = -1;
        long blockedValue = 0;
        int blockedWriter = -1;
        long steps = 0;
        int entry = next[head];
        while (next[head] != tail) {
            if (++steps > maxSteps || (long) cache.size() * linearized.length > MAX_CACHE_WORDS) {
                return new Outcome(Verdict.UNKNOWN, steps, null, 0, null, depth);
            }
            if (isCall[entry]) {
                Operation op = ops.get(opOf[entry]);
                boolean allowed = op.kind() == Kind.WRITE || op.value() == value;
                long after = op.kind() == Kind.WRITE ? op.value() : value;
                int bit = opOf[entry];
                if (allowed) {
                    linearized[bit >>> 6] |= 1L << bit;
                    if (cache.add(new CacheEntry(linearized.clone(), after))) {
                        stackNode[depth] = entry;
                        stackValue[depth] = value;
                        stackWriter[depth++] = writer;
                        if (op.kind() == Kind.WRITE) {
                            writer = opOf[entry];
                        }
                        value = after;
                        lift(entry, match[entry], next, prev);
                        entry = next[head];
                        continue;
                    }
                    linearized[bit >>> 6] &= ~(1L << bit);
                }
                entry = next[entry];
            } else {
                if (depth > bestDepth) {
                    bestDepth = depth;
                    blocked = opOf[entry];
                    blockedValue = value;
                    blockedWriter = writer;
                }
                if (depth == 0) {
                    return new Outcome(Verdict.NOT_LINEARIZABLE, steps, ops.get(blocked), blockedValue,
                            blockedWriter < 0 ? null : ops.get(blockedWriter), bestDepth);
                }
                int undone = stackNode[--depth];
                value = stackValue[depth];
                writer = stackWriter[depth];
                linearized[opOf[undone] >>> 6] &= ~(1L << opOf[undone]);
                unlift(undone, match[undone], next, prev);
                entry = next[undone];
            }
        }
        return new Outcome(Verdict.LINEARIZABLE, steps, null, value, writer < 0 ? null : ops.get(writer), n);
    }

    private static long time(List<Operation> ops, long[] returnAt, int event) {
        return (event & 1) == 0 ? ops.get(event >> 1).invokedAt() : returnAt[event >> 1];
    }

    /** When each operation returns for the search (see the class comment on indeterminate writes). */
    private static long[] returns(List<Operation> ops) {
        Map<Long, Integer> writesOf = new HashMap<>();
        Map<Long, Long> firstReadOf = new HashMap<>();
        for (Operation o : ops) {
            if (o.kind() == Kind.WRITE) {
                writesOf.merge(o.value(), 1, Integer::sum);
            } else {
                firstReadOf.merge(o.value(), o.completedAt(), Math::min);
            }
        }
        long[] at = new long[ops.size()];
        for (int i = 0; i < at.length; i++) {
            Operation o = ops.get(i);
            at[i] = o.effectiveCompletion();
            Long read = firstReadOf.get(o.value());
            if (o.kind() == Kind.WRITE && o.outcome() == Operation.Outcome.INDETERMINATE && o.value() != Operation.ABSENT
                    && writesOf.get(o.value()) == 1 && read != null) {
                at[i] = Math.max(o.invokedAt(), read);
            }
        }
        return at;
    }

    private static void lift(int call, int ret, int[] next, int[] prev) {
        next[prev[call]] = next[call];
        prev[next[call]] = prev[call];
        next[prev[ret]] = next[ret];
        prev[next[ret]] = prev[ret];
    }

    /** Undoes {@link #lift}: the removed nodes kept their own links. */
    private static void unlift(int call, int ret, int[] next, int[] prev) {
        next[prev[ret]] = ret;
        prev[next[ret]] = ret;
        next[prev[call]] = call;
        prev[next[call]] = call;
    }

    /** A state of the search: which operations are linearized, and the register's value after them. */
    private record CacheEntry(long[] linearized, long value) {
        @Override
        public boolean equals(Object o) {
            return o instanceof CacheEntry c && c.value == value && Arrays.equals(c.linearized, linearized);
        }

        @Override
        public int hashCode() {
            return Arrays.hashCode(linearized) * 31 + Long.hashCode(value);
        }
    }
}
