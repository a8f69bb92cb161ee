package io.erda.history;

import io.erda.history.Operation.Kind;
import io.erda.history.Operation.Outcome;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;

/**
 * Names what is wrong with one key's history ({@link Anomaly}) by looking at pairs of operations, without a search.
 * Every anomaly it finds makes the history non-linearizable, so it also settles a key whose search ran out of budget;
 * a history can be non-linearizable without any of them (two reads that disagree on the order of concurrent writes).
 */
final class Anomalies {
    private Anomalies() {
    }

    /** {@code ops}: one key's operations, none failed, every read {@code OK}. */
    static List<Anomaly> find(List<Operation> ops) {
        List<Operation> writes = ops.stream().filter(o -> o.kind() == Kind.WRITE).toList();
        List<Operation> reads = ops.stream().filter(o -> o.kind() == Kind.READ).toList();
        List<Anomaly> found = new ArrayList<>();
        Set<Operation> lost = new HashSet<>();
        for (Operation r : reads) {
            // the latest completion among the writes that could have put r's value there (the initial state: -inf)
            boolean written = r.value() == Operation.ABSENT;
            long source = Long.MIN_VALUE;
            for (Operation w : writes) {
                if (w.value() == r.value() && w.invokedAt() <= r.completedAt()) {
                    written = true;
                    source = Math.max(source, w.effectiveCompletion());
                }
            }
            if (!written) {
                found.add(new Anomaly(Anomaly.Type.UNWRITTEN, r, null));
                continue;
            }
            Operation over = null; // the last acknowledged write that overwrote every source before r began
            for (Operation w : writes) {
                if (w.outcome() == Outcome.OK && w.value() != r.value() && w.invokedAt() > source
                        && w.completedAt() < r.invokedAt() && (over == null || w.completedAt() > over.completedAt())) {
                    over = w;
                }
            }
            if (over == null) {
                continue;
            }
            if (!seenAfter(reads, over.value(), r.completedAt())) {
                if (lost.add(over)) {
                    found.add(new Anomaly(Anomaly.Type.LOST, r, over));
                }
            } else {
                found.add(new Anomaly(Anomaly.Type.STALE, r, over));
            }
        }
        return found;
    }

    private static boolean seenAfter(List<Operation> reads, long value, long after) {
        for (Operation r : reads) {
            if (r.value() == value && r.invokedAt() > after) {
                return true;
            }
        }
        return false;
    }
}
