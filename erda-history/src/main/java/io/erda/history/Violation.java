package io.erda.history;

import java.util.List;

/**
 * A key whose history has no linearization, and why: the operation that could not follow the longest linearizable
 * prefix the search found (null when the search ran out of budget but the anomalies prove the key wrong), what the
 * register held then and which write put it there (null: the initial {@link Operation#ABSENT}), and the named
 * anomalies found in the key's history.
 */
public record Violation(String key, Operation blocked, long registerValue, Operation lastWrite, int linearized,
                        List<Anomaly> anomalies) {

    public Violation {
        anomalies = List.copyOf(anomalies);
    }

    public String describe() {
        StringBuilder b = new StringBuilder("key ").append(key).append(" is not linearizable");
        if (blocked != null) {
            b.append(": after ").append(linearized).append(" operations the register held ")
                    .append(Operation.valueText(registerValue))
                    .append(lastWrite == null ? " (initial)" : " from " + lastWrite)
                    .append(", and ").append(blocked).append(" cannot come next");
        }
        for (Anomaly a : anomalies) {
            b.append("; ").append(a.describe());
        }
        return b.toString();
    }
}
