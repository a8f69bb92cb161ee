package io.erda.history;

import io.erda.history.Operation.Kind;
import io.erda.history.Operation.Outcome;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * Checks that a history of registers, one per key, is linearizable. Linearizability is compositional (Herlihy &amp;
 * Wing), so each key is checked on its own, as Porcupine's partitioned models do, by {@link RegisterSearch}; a key's
 * history is short even when the whole is millions of operations. A key whose search takes more than the budget of
 * steps is reported unknown rather than searched for ever.
 *
 * <p>A register starts {@link Operation#ABSENT}. Failed operations are left out; so are reads that returned nothing
 * (counted in {@link CheckResult#failedReads()}). An indeterminate write may take effect at any time after its
 * invocation, or never; one whose value no read returned is left out, since a write nobody saw can always be placed
 * after everything (and leaving it in makes the search try it everywhere).
 */
public final class LinearizabilityChecker {
    /**
     * Search steps per key before it is called unknown. A linearizable key with a few operations in flight at a time
     * takes a few steps per operation; the search is exponential in how many overlap, and a refutation explores
     * everything, so a key with dozens of operations in flight at once can take more than any budget.
     */
    public static final long DEFAULT_STEPS_PER_KEY = 1_000_000;

    private final long stepsPerKey;

    public LinearizabilityChecker(long stepsPerKey) {
        if (stepsPerKey < 1) {
            throw new IllegalArgumentException("steps per key " + stepsPerKey + " must be at least 1");
        }
        this.stepsPerKey = stepsPerKey;
    }

    /** Checks with {@link #DEFAULT_STEPS_PER_KEY}. */
    public static CheckResult check(History history) {
        return new LinearizabilityChecker(DEFAULT_STEPS_PER_KEY).check(history.operations());
    }

    public CheckResult check(List<Operation> operations) {
        Map<String, List<Operation>> byKey = new LinkedHashMap<>();
        long ok = 0;
        long failed = 0;
        long indeterminate = 0;
        long failedReads = 0;
        for (Operation o : operations) {
            switch (o.outcome()) {
                case OK -> ok++;
                case FAILED -> failed++;
                case INDETERMINATE -> indeterminate++;
            }
            if (o.kind() == Kind.READ && o.outcome() != Outcome.OK) {
                failedReads++;
            }
            byKey.computeIfAbsent(o.key(), k -> new ArrayList<>()).add(o);
        }
        List<Violation> violations = new ArrayList<>();
        List<String> unknown = new ArrayList<>();
        for (Map.Entry<String, List<Operation>> e : byKey.entrySet()) {
            List<Operation> ops = relevant(e.getValue());
            RegisterSearch.Outcome found = RegisterSearch.run(ops, stepsPerKey);
            if (found.verdict() == RegisterSearch.Verdict.LINEARIZABLE) {
                continue;
            }
            List<Anomaly> anomalies = Anomalies.find(ops);
            if (found.verdict() == RegisterSearch.Verdict.NOT_LINEARIZABLE) {
                violations.add(new Violation(e.getKey(), found.blocked(), found.registerValue(), found.lastWrite(),
                        found.linearized(), anomalies));
            } else if (!anomalies.isEmpty()) {
                violations.add(new Violation(e.getKey(), null, Operation.ABSENT, null, 0, anomalies));
            } else {
                unknown.add(e.getKey());
            }
        }
        return new CheckResult(byKey.size(), violations, unknown, ok, failed, indeterminate, failedReads);
    }

    /** The operations of one key that constrain a linearization (see the class comment). */
    private static List<Operation> relevant(List<Operation> ops) {
        Set<Long> valuesRead = new HashSet<>();
        for (Operation o : ops) {
            if (o.kind() == Kind.READ && o.outcome() == Outcome.OK) {
                valuesRead.add(o.value());
            }
        }
        List<Operation> kept = new ArrayList<>();
        for (Operation o : ops) {
            boolean keep = switch (o.outcome()) {
                case OK -> true;
                case FAILED -> false;
                case INDETERMINATE -> o.kind() == Kind.WRITE && valuesRead.contains(o.value());
            };
            if (keep) {
                kept.add(o);
            }
        }
        return kept;
    }
}
