package io.erda.history;

import java.util.List;

/**
 * What {@link LinearizabilityChecker} found in a history: the keys that are not linearizable with their
 * explanations, the keys whose search ran out of budget ({@code unknownKeys}: neither proven nor refuted), and counts
 * of the operations by outcome; {@code failedReads} are reads that returned nothing (failed or indeterminate), left
 * out of the check.
 */
public record CheckResult(int keys, List<Violation> violations, List<String> unknownKeys, long ok, long failed,
                          long indeterminate, long failedReads) {

    public CheckResult {
        violations = List.copyOf(violations);
        unknownKeys = List.copyOf(unknownKeys);
    }

    /** Every key was proven linearizable. */
    public boolean linearizable() {
        return violations.isEmpty() && unknownKeys.isEmpty();
    }

    /** {@code yes}, {@code no}, or {@code unknown} (no violation found, but some key not proven). */
    public String verdict() {
        return !violations.isEmpty() ? "no" : unknownKeys.isEmpty() ? "yes" : "unknown";
    }

    public long count(Anomaly.Type type) {
        return violations.stream().flatMap(v -> v.anomalies().stream()).filter(a -> a.type() == type).count();
    }

    public long stale() {
        return count(Anomaly.Type.STALE);
    }

    public long lost() {
        return count(Anomaly.Type.LOST);
    }

    public long unwritten() {
        return count(Anomaly.Type.UNWRITTEN);
    }
}
