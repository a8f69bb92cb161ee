package io.erda.bench.cluster;

import io.erda.history.CheckResult;
import io.erda.history.History;
import io.erda.history.LinearizabilityChecker;
import io.erda.history.Operation;
import io.erda.history.Violation;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * What a {@link ClusterNemesis} run comes to: the faults it injected and the {@link LinearizabilityChecker}'s
 * judgement of the whole history (a register per key). It passes only when the history is linearizable, no read was
 * stale and no acknowledged write lost, and besides some write was acknowledged and every key was read back at the
 * end (a run in which nothing worked checks nothing).
 */
record NemesisVerdict(Faults faults, CheckResult check, List<String> problems) {
    /** How many faults of each kind were injected. */
    record Faults(long kills, long pauses, long partitions, long zookeeperRestarts) {
        long total() {
            return kills + pauses + partitions + zookeeperRestarts;
        }
    }

    static final int EXAMPLES = 10;

    NemesisVerdict {
        problems = List.copyOf(problems);
    }

    /** Checks {@code history}; {@code problems}: what the run itself found wrong (a key not read back, say). */
    static NemesisVerdict judge(History history, Faults faults, List<String> problems) {
        CheckResult check = LinearizabilityChecker.check(history);
        List<String> all = new ArrayList<>(problems);
        if (history.operations().stream().noneMatch(o -> o.kind() == Operation.Kind.WRITE
                && o.outcome() == Operation.Outcome.OK)) {
            all.add("no write was acknowledged: the run checked nothing");
        }
        return new NemesisVerdict(faults, check, all);
    }

    boolean passed() {
        return check.linearizable() && check.stale() == 0 && check.lost() == 0 && problems.isEmpty();
    }

    int exitCode() {
        return passed() ? 0 : 1;
    }

    /** The violations (at most {@link #EXAMPLES}), keys over the search budget, and the problems, one a line. */
    List<String> details() {
        List<String> lines = new ArrayList<>();
        check.violations().stream().limit(EXAMPLES).map(Violation::describe).forEach(lines::add);
        check.unknownKeys().stream().limit(EXAMPLES).forEach(k -> lines.add("key " + k + ": search over budget"));
        problems.forEach(p -> lines.add("problem: " + p));
        return lines;
    }

    /** The last line of a run. */
    String line() {
        return String.format(Locale.ROOT, "nemesis faults %d (kills %d, pauses %d, partitions %d), operations %d (ok %d, "
                + "failed %d, indeterminate %d), linearizable %s, stale %d, lost %d", faults.total(), faults.kills(),
                faults.pauses(), faults.partitions(), check.ok() + check.failed() + check.indeterminate(), check.ok(),
                check.failed(), check.indeterminate(), check.verdict(), check.stale(), check.lost());
    }
}
