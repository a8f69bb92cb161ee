package io.erda.history;

import java.util.Locale;

/**
 * One operation of a history on a register per key: who ran it, on which key, what it wrote or read, when it was
 * invoked and when it completed (monotonic nanoseconds, one clock for every process: {@link System#nanoTime()} is
 * CLOCK_MONOTONIC on Linux), and how it ended.
 *
 * <p>Values are opaque {@code long}s compared for equality: a campaign whose every write carries a sequence number
 * uses that number. {@link #ABSENT} is the register's initial value, what a read of a missing key returns and what a
 * delete writes. An {@link Outcome#INDETERMINATE} operation may have completed at any time after its invocation or
 * never; its {@code completedAt} is what the process saw ({@link #NEVER} when it never saw an end, killed first), but a
 * checker treats it as +infinity, as Jepsen does with {@code :info}.
 *
 * @param process the client that ran it; a process runs one operation at a time and a restarted client is a new one
 * @param value   for a write the value written, for a read the value returned (meaningless unless {@link Outcome#OK})
 */
public record Operation(int process, String key, Kind kind, long value, long invokedAt, long completedAt,
                        Outcome outcome) {
    /** The value of a key that holds none: initial, deleted, or a read that found nothing. */
    public static final long ABSENT = Long.MIN_VALUE;
    /** The completion time of an operation whose process never saw it end. */
    public static final long NEVER = Long.MAX_VALUE;

    /** Read or write; a delete is a write of {@link #ABSENT}. */
    public enum Kind { READ, WRITE }

    /** How an operation ended. */
    public enum Outcome {
        /** Took effect (a write) or returned its value (a read), between invocation and completion. */
        OK,
        /** Definitely did not take effect: only where the protocol guarantees it. */
        FAILED,
        /** May or may not have taken effect, at any time after its invocation (Jepsen's {@code :info}). */
        INDETERMINATE
    }

    public Operation {
        if (key == null || key.isEmpty() || key.chars().anyMatch(c -> c <= ' ')) {
            throw new IllegalArgumentException("key '" + key + "' must be non-empty without spaces or control characters");
        }
        if (completedAt < invokedAt) {
            throw new IllegalArgumentException("operation on " + key + " by process " + process + " completed at "
                    + completedAt + ", before its invocation at " + invokedAt);
        }
    }

    public static Operation write(int process, String key, long value, long invokedAt, long completedAt, Outcome outcome) {
        return new Operation(process, key, Kind.WRITE, value, invokedAt, completedAt, outcome);
    }

    public static Operation read(int process, String key, long value, long invokedAt, long completedAt, Outcome outcome) {
        return new Operation(process, key, Kind.READ, value, invokedAt, completedAt, outcome);
    }

    /** When a checker must consider it finished: +infinity ({@link #NEVER}) unless {@link Outcome#OK}. */
    public long effectiveCompletion() {
        return outcome == Outcome.OK ? completedAt : NEVER;
    }

    /** {@code value} as a history file and an explanation write it: decimal, or {@code absent}. */
    public static String valueText(long value) {
        return value == ABSENT ? "absent" : Long.toString(value);
    }

    @Override
    public String toString() {
        String what = kind == Kind.WRITE ? (value == ABSENT ? "delete" : "write " + value)
                : "read" + (outcome == Outcome.OK ? " -> " + valueText(value) : "");
        String end = completedAt == NEVER ? "never" : Long.toString(completedAt);
        return String.format(Locale.ROOT, "process %d %s %s [%d, %s] %s", process, key, what, invokedAt, end,
                outcome.name().toLowerCase(Locale.ROOT));
    }
}
