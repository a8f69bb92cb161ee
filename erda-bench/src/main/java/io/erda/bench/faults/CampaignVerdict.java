package io.erda.bench.faults;

import io.erda.history.CheckResult;
import io.erda.history.History;
import io.erda.history.LinearizabilityChecker;
import io.erda.history.Operation;
import io.erda.history.Operation.Kind;
import io.erda.history.Operation.Outcome;
import io.erda.history.Violation;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Locale;

/**
 * Judges a fault campaign's history: the {@link LinearizabilityChecker} over every key (a PUT writes its sequence
 * number, a DELETE absent, a GET of bytes no PUT wrote whole reads {@link CampaignValue#TORN}), and the rules of
 * {@link FaultCampaign} the checker cannot see: most GETs between faults succeed, and no client write invoked after a
 * server's death is acknowledged before the read-back after it is done. The driver (process {@link #DRIVER}) notes
 * when the public server is up, when it is about to go down (the end of a stretch between faults), when it is dead,
 * when a read-back is done and when a client died; clients note the faults they inject.
 */
final class CampaignVerdict {
    /** The campaign driver's process number: its read-backs and notes. */
    static final int DRIVER = -1;
    static final String SERVER_UP = "server-up";
    static final String SERVER_DOWN = "server-down";
    static final String SERVER_DEAD = "server-dead";
    static final String READ_BACK_DONE = "read-back-done";
    /** A client process died (killed by the driver, or by itself with 137) and is started again. */
    static final String CLIENT_KILLED = "client-killed";
    static final String WRITE_FAULT = "write-fault";
    static final String BROKEN_CONNECTION = "broken-connection";
    static final String TORN = "torn";
    static final int EXAMPLES = 10;

    /** What the campaign's history shows; torn reads are the checker's unwritten ones. */
    record Result(CheckResult check, long acknowledged, long readBacks, long getsOk, long getsFailed,
                  long getsOkBetweenFaults, long getsBetweenFaults, long writeFaults, long brokenConnections,
                  List<String> problems, List<String> examples) {
        long lost() {
            return check.lost();
        }

        long torn() {
            return check.unwritten();
        }

        long stale() {
            return check.stale();
        }

        boolean clean() {
            return check.linearizable() && lost() == 0 && torn() == 0 && stale() == 0 && problems.isEmpty()
                    && acknowledged > 0;
        }
    }

    private CampaignVerdict() {
    }

    /** The process number of client {@code client}'s {@code incarnation}-th run: a restarted client is a new process. */
    static int process(int client, int incarnation) {
        return incarnation * FaultCampaign.MAX_CLIENTS + client;
    }

    static Result judge(History history) {
        CheckResult check = LinearizabilityChecker.check(history);
        List<History.Note> driver = history.notes().stream().filter(n -> n.process() == DRIVER)
                .sorted(Comparator.comparingLong(History.Note::at)).toList();
        List<long[]> up = upWindows(driver);
        long acknowledged = 0;
        long readBacks = 0;
        long getsOk = 0;
        long getsFailed = 0;
        long okBetween = 0;
        long between = 0;
        for (Operation o : history.operations()) {
            if (o.process() == DRIVER) {
                readBacks += o.kind() == Kind.READ ? 1 : 0;
            } else if (o.kind() == Kind.WRITE) {
                acknowledged += o.outcome() == Outcome.OK ? 1 : 0;
            } else if (o.outcome() != Outcome.INDETERMINATE) { // a GET cut short by its client's kill proves nothing
                boolean ok = o.outcome() == Outcome.OK;
                getsOk += ok ? 1 : 0;
                getsFailed += ok ? 0 : 1;
                if (within(up, o)) {
                    between++;
                    okBetween += ok ? 1 : 0;
                }
            }
        }
        List<String> problems = new ArrayList<>(writesBeforeReadBack(history, driver));
        if (between == 0 || 2 * okBetween < between) {
            problems.add(String.format(Locale.ROOT, "only %d of %d GETs between faults succeeded, fewer than half: "
                    + "a campaign whose reads mostly fail checks little", okBetween, between));
        }
        List<String> examples = new ArrayList<>();
        check.violations().stream().map(Violation::describe).limit(EXAMPLES).forEach(examples::add);
        history.notes().stream().filter(n -> n.text().startsWith(TORN + " ")).limit(EXAMPLES)
                .forEach(n -> examples.add("process " + n.process() + " at " + n.at() + ": " + n.text()));
        check.unknownKeys().stream().limit(EXAMPLES).forEach(k -> examples.add("key " + k + ": search over budget"));
        return new Result(check, acknowledged, readBacks, getsOk, getsFailed, okBetween, between,
                count(history, WRITE_FAULT), count(history, BROKEN_CONNECTION), problems, examples);
    }

    /** [up, down) intervals of the public server, from the driver's notes. */
    private static List<long[]> upWindows(List<History.Note> driver) {
        List<long[]> windows = new ArrayList<>();
        long since = -1;
        for (History.Note n : driver) {
            if (n.text().startsWith(SERVER_UP)) {
                since = n.at();
            } else if (n.text().startsWith(SERVER_DOWN) && since >= 0) {
                windows.add(new long[] {since, n.at()});
                since = -1;
            }
        }
        if (since >= 0) {
            windows.add(new long[] {since, Long.MAX_VALUE});
        }
        return windows;
    }

    private static boolean within(List<long[]> windows, Operation o) {
        for (long[] w : windows) {
            if (o.invokedAt() >= w[0] && o.completedAt() < w[1]) {
                return true;
            }
        }
        return false;
    }

    /**
     * Client writes invoked after a server was dead and acknowledged before the read-back after it was done: a
     * restarted store took them before its keys were read back. (One invoked before the death may be acknowledged by
     * the dying server a moment after the driver's note.)
     */
    private static List<String> writesBeforeReadBack(History history, List<History.Note> driver) {
        List<String> found = new ArrayList<>();
        long dead = -1;
        for (History.Note n : driver) {
            if (n.text().startsWith(SERVER_DEAD)) {
                dead = n.at();
            } else if (n.text().startsWith(READ_BACK_DONE) && dead >= 0) {
                long from = dead;
                history.operations().stream().filter(o -> o.process() != DRIVER && o.kind() == Kind.WRITE
                        && o.outcome() == Outcome.OK && o.invokedAt() > from && o.completedAt() < n.at())
                        .limit(EXAMPLES).forEach(o -> found.add("acknowledged after the server died at " + from
                                + " and before its read-back was done at " + n.at() + ", so it could mask a lost write: "
                                + o));
                dead = -1;
            }
        }
        return found;
    }

    private static long count(History history, String note) {
        return history.notes().stream().filter(n -> n.text().startsWith(note)).count();
    }
}
