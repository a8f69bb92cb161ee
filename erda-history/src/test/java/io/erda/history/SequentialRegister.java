package io.erda.history;

import io.erda.history.Operation.Outcome;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;

/**
 * Histories that are linearizable by construction: a real register, each operation taking effect at an instant
 * (10, 20, 30, ... ns) with its invocation and completion drawn around that instant, so operations overlap at random.
 * Writes write unique values; some writes end indeterminate (taking effect or not) and some fail (not taking effect).
 */
final class SequentialRegister {
    private SequentialRegister() {
    }

    static List<Operation> history(String key, int operations, int processes, long spread, Random random) {
        List<Operation> ops = new ArrayList<>();
        long value = Operation.ABSENT;
        for (int i = 0; i < operations; i++) {
            long instant = 10L * (i + 1);
            long invoked = instant - random.nextLong(spread + 1);
            long completed = instant + random.nextLong(spread + 1);
            int process = random.nextInt(processes);
            if (random.nextInt(3) == 0) {
                ops.add(Operation.read(process, key, value, invoked, completed, Outcome.OK));
                continue;
            }
            long written = random.nextInt(10) == 0 ? Operation.ABSENT : ((long) key.hashCode() << 32) | i;
            int fate = random.nextInt(20);
            if (fate == 0) {
                ops.add(Operation.write(process, key, written, invoked, completed, Outcome.FAILED));
            } else if (fate <= 2) {
                boolean tookEffect = fate == 1;
                if (tookEffect) {
                    value = written;
                }
                ops.add(Operation.write(process, key, written, invoked, completed, Outcome.INDETERMINATE));
            } else {
                value = written;
                ops.add(Operation.write(process, key, written, invoked, completed, Outcome.OK));
            }
        }
        return ops;
    }

    /**
     * Turns one read into a stale one no linearization explains, and returns its index, or -1 where the history has
     * no such read: the read gets the value of an acknowledged write (value unique) that completed before another
     * acknowledged write of another value was invoked, which completed before the read began.
     */
    static int makeOneReadStale(List<Operation> ops, Random random) {
        List<Integer> reads = new ArrayList<>();
        for (int i = 0; i < ops.size(); i++) {
            if (ops.get(i).kind() == Operation.Kind.READ) {
                reads.add(i);
            }
        }
        java.util.Collections.shuffle(reads, random);
        for (int r : reads) {
            Operation read = ops.get(r);
            for (Operation over : ops) {
                if (!acknowledgedWrite(over) || over.completedAt() >= read.invokedAt()) {
                    continue;
                }
                for (Operation older : ops) {
                    if (acknowledgedWrite(older) && older.value() != Operation.ABSENT && older.value() != over.value()
                            && older.completedAt() < over.invokedAt()) {
                        ops.set(r, Operation.read(read.process(), read.key(), older.value(), read.invokedAt(),
                                read.completedAt(), Outcome.OK));
                        return r;
                    }
                }
            }
        }
        return -1;
    }

    private static boolean acknowledgedWrite(Operation o) {
        return o.kind() == Operation.Kind.WRITE && o.outcome() == Outcome.OK;
    }
}
