package io.erda.history;

import static io.erda.history.Operation.ABSENT;
import static io.erda.history.Operation.Outcome.FAILED;
import static io.erda.history.Operation.Outcome.INDETERMINATE;
import static io.erda.history.Operation.Outcome.OK;
import static io.erda.history.Operation.read;
import static io.erda.history.Operation.write;
import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import org.junit.jupiter.api.Test;

/** The checker on hand-made histories of one key: what it must accept, and each anomaly it must reject and name. */
class LinearizabilityCheckerTest {

    private static CheckResult check(Operation... ops) {
        return LinearizabilityChecker.check(History.of(List.of(ops)));
    }

    @Test
    void overlappingWritesMayTakeEffectInEitherOrderAndReadsMaySeeEither() {
        CheckResult r = check(
                write(0, "k", 1, 0, 100, OK),
                write(1, "k", 2, 10, 90, OK),
                read(2, "k", 1, 20, 30, OK),   // 2 then 1 ...
                read(3, "k", 1, 110, 120, OK), // ... and 1 stays
                read(4, "k", ABSENT, 5, 15, OK)); // before either
        assertThat(r.linearizable()).as(r.violations().toString()).isTrue();
        assertThat(r.verdict()).isEqualTo("yes");
        assertThat(r.ok()).isEqualTo(5);
    }

    @Test
    void aReadOverlappingAWriteMaySeeTheOldOrTheNewValue() {
        CheckResult r = check(
                write(0, "k", 1, 0, 10, OK),
                write(0, "k", 2, 20, 60, OK),
                read(1, "k", 2, 25, 30, OK),
                read(2, "k", 2, 35, 40, OK),
                read(3, "k", 1, 15, 70, OK)); // overlaps the write of 2: may come before it
        assertThat(r.linearizable()).as(r.violations().toString()).isTrue();
    }

    @Test
    void anIndeterminateWriteMayHaveTakenEffectLateOrNever() {
        CheckResult tookEffectLate = check(
                write(0, "k", 1, 0, 10, OK),
                write(0, "k", 2, 20, 30, INDETERMINATE),
                read(1, "k", 1, 40, 50, OK),
                read(1, "k", 2, 500, 510, OK),
                read(1, "k", 2, 600, 610, OK));
        assertThat(tookEffectLate.linearizable()).as(tookEffectLate.violations().toString()).isTrue();
        CheckResult never = check(
                write(0, "k", 1, 0, 10, OK),
                write(0, "k", 2, 20, Operation.NEVER, INDETERMINATE),
                read(1, "k", 1, 40, 50, OK),
                read(1, "k", 1, 500, 510, OK));
        assertThat(never.linearizable()).as(never.violations().toString()).isTrue();
        assertThat(never.indeterminate()).isEqualTo(1);
    }

    @Test
    void anIndeterminateWriteOnceSeenCannotBeUnseen() {
        CheckResult r = check(
                write(0, "k", 1, 0, 10, OK),
                write(0, "k", 2, 20, 30, INDETERMINATE),
                read(1, "k", 2, 40, 50, OK),
                read(1, "k", 1, 60, 70, OK));
        assertThat(r.verdict()).isEqualTo("no");
    }

    @Test
    void aDeleteIsAWriteOfAbsent() {
        CheckResult r = check(
                write(0, "k", 1, 0, 10, OK),
                write(0, "k", ABSENT, 20, 30, OK),
                read(1, "k", ABSENT, 40, 50, OK),
                read(1, "k", 1, 15, 25, OK));
        assertThat(r.linearizable()).as(r.violations().toString()).isTrue();
    }

    @Test
    void aStaleReadIsRejectedAndNamedStale() {
        CheckResult r = check(
                write(0, "k", 1, 0, 10, OK),
                write(0, "k", 2, 20, 30, OK),
                read(1, "k", 1, 40, 50, OK),   // 2 was acknowledged before this began
                read(1, "k", 2, 60, 70, OK));  // ... and the store still has it
        assertThat(r.verdict()).isEqualTo("no");
        assertThat(r.stale()).isEqualTo(1);
        assertThat(r.lost()).isZero();
        Violation v = r.violations().getFirst();
        assertThat(v.key()).isEqualTo("k");
        assertThat(v.blocked()).as("the stale read cannot follow the write of 2").isEqualTo(read(1, "k", 1, 40, 50, OK));
        assertThat(v.registerValue()).isEqualTo(2);
        assertThat(v.describe()).contains("read -> 1 [40, 50]", "register held 2", "stale:");
    }

    @Test
    void anAcknowledgedWriteThatReadsNeverSeeAgainIsLost() {
        CheckResult r = check(
                write(0, "k", 1, 0, 10, OK),
                write(0, "k", 2, 20, 30, OK),
                read(9, "k", 1, 1000, 1010, OK),  // the read-back after a restart
                write(0, "k", 3, 1020, 1030, OK),
                read(1, "k", 3, 1040, 1050, OK));
        assertThat(r.verdict()).isEqualTo("no");
        assertThat(r.lost()).isEqualTo(1);
        assertThat(r.stale()).isZero();
        Anomaly a = r.violations().getFirst().anomalies().getFirst();
        assertThat(a.write().value()).isEqualTo(2);
        assertThat(a.read().invokedAt()).isEqualTo(1000);
    }

    @Test
    void aLostDeleteIsLostToo() {
        CheckResult r = check(
                write(0, "k", 1, 0, 10, OK),
                write(0, "k", ABSENT, 20, 30, OK),
                read(9, "k", 1, 1000, 1010, OK));
        assertThat(r.lost()).isEqualTo(1);
    }

    @Test
    void aReadOfAValueNeverWrittenOrWrittenOnlyLaterOrByAFailedWriteIsRejected() {
        assertThat(check(write(0, "k", 1, 0, 10, OK), read(1, "k", 7, 20, 30, OK)).unwritten()).isEqualTo(1);
        assertThat(check(read(1, "k", 7, 20, 30, OK), write(0, "k", 7, 40, 50, OK)).unwritten())
                .as("a value from the future").isEqualTo(1);
        CheckResult failedWrite = check(write(0, "k", 7, 0, 10, FAILED), read(1, "k", 7, 20, 30, OK));
        assertThat(failedWrite.unwritten()).as("a failed write did not take effect").isEqualTo(1);
        assertThat(failedWrite.failed()).isEqualTo(1);
    }

    @Test
    void reversedReadsOfConcurrentWritesAreRejectedWithoutANamedAnomaly() {
        CheckResult r = check(
                write(0, "k", 1, 0, 100, OK),
                write(1, "k", 2, 0, 100, OK),
                read(2, "k", 1, 10, 20, OK),
                read(2, "k", 2, 30, 40, OK),
                read(3, "k", 1, 50, 60, OK));
        assertThat(r.verdict()).isEqualTo("no");
        assertThat(r.stale() + r.lost() + r.unwritten()).isZero();
        assertThat(r.violations().getFirst().blocked()).isNotNull();
    }

    @Test
    void failedReadsAreCountedButConstrainNothing() {
        CheckResult r = check(
                write(0, "k", 1, 0, 10, OK),
                read(1, "k", 99, 20, 30, FAILED),
                read(1, "k", 98, 40, Operation.NEVER, INDETERMINATE));
        assertThat(r.linearizable()).isTrue();
        assertThat(r.failedReads()).isEqualTo(2);
    }

    @Test
    void keysAreCheckedApartAndOnlyTheWrongOneIsReported() {
        CheckResult r = check(
                write(0, "a", 1, 0, 10, OK),
                write(0, "b", 2, 0, 10, OK),
                read(1, "a", 2, 20, 30, OK),
                read(1, "b", 2, 20, 30, OK));
        assertThat(r.keys()).isEqualTo(2);
        assertThat(r.violations()).extracting(Violation::key).containsExactly("a");
    }

    @Test
    void aSearchOverItsBudgetIsUnknownNotAnswered() {
        List<Operation> ops = new java.util.ArrayList<>();
        for (int i = 0; i < 40; i++) { // 40 writes all overlapping, then reads that need one particular order
            ops.add(write(i, "k", i, 0, 1000, OK));
        }
        for (int i = 0; i < 40; i++) {
            ops.add(read(100 + i, "k", i, 1010 + 10L * i, 1015 + 10L * i, OK));
        }
        CheckResult r = new LinearizabilityChecker(1000).check(ops);
        assertThat(r.verdict()).isEqualTo("unknown");
        assertThat(r.unknownKeys()).containsExactly("k");
        assertThat(r.linearizable()).isFalse();
    }
}
