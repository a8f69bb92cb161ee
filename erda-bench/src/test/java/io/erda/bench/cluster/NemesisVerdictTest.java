package io.erda.bench.cluster;

import static org.assertj.core.api.Assertions.assertThat;

import io.erda.history.HistoryRecorder;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * The nemesis's own verdict path ({@link NemesisVerdict}): the history it records goes through the checker, and a
 * stale read makes the last line say so and the exit status non-zero.
 */
class NemesisVerdictTest {
    private static final NemesisVerdict.Faults FAULTS = new NemesisVerdict.Faults(1, 2, 3, 1);

    @Test
    void aStaleReadMakesTheVerdictNoStaleOneAndTheExitNonZero() {
        HistoryRecorder recorder = HistoryRecorder.inMemory();
        recorder.ok(recorder.invokeWrite(0, "k1", 1));
        recorder.ok(recorder.invokeWrite(1, "k1", 2)); // acknowledged before the next read begins
        recorder.ok(recorder.invokeRead(100, "k1"), 1); // stale: 2 was acknowledged before it began
        recorder.ok(recorder.invokeRead(NemesisLoad.READ_BACK, "k1"), 2); // the store still had 2: stale, not lost

        NemesisVerdict verdict = NemesisVerdict.judge(recorder.history(), FAULTS, List.of());

        assertThat(verdict.line()).isEqualTo("nemesis faults 7 (kills 1, pauses 2, partitions 3), operations 4 (ok 4, "
                + "failed 0, indeterminate 0), linearizable no, stale 1, lost 0");
        assertThat(verdict.exitCode()).isEqualTo(1);
        assertThat(verdict.details()).anySatisfy(d -> assertThat(d).contains("key k1 is not linearizable")
                .contains("stale"));
    }

    @Test
    void aLinearizableHistoryWithFailedAndIndeterminateOperationsPasses() {
        HistoryRecorder recorder = HistoryRecorder.inMemory();
        recorder.ok(recorder.invokeWrite(0, "k1", 1));
        recorder.info(recorder.invokeWrite(1, "k1", 2)); // a PUT that threw: it may have happened
        recorder.fail(recorder.invokeRead(100, "k1"));
        recorder.ok(recorder.invokeRead(NemesisLoad.READ_BACK, "k1"), 2); // it did

        NemesisVerdict verdict = NemesisVerdict.judge(recorder.history(), FAULTS, List.of());

        assertThat(verdict.line()).endsWith("operations 4 (ok 2, failed 1, indeterminate 1), linearizable yes, stale 0, "
                + "lost 0");
        assertThat(verdict.exitCode()).isZero();
    }

    @Test
    void aRunWhoseKeysWereNotAllReadBackFailsThoughLinearizable() {
        HistoryRecorder recorder = HistoryRecorder.inMemory();
        recorder.ok(recorder.invokeWrite(0, "k1", 1));

        NemesisVerdict verdict = NemesisVerdict.judge(recorder.history(), FAULTS,
                List.of("key k1 could not be read back in 20 attempts"));

        assertThat(verdict.line()).endsWith("linearizable yes, stale 0, lost 0");
        assertThat(verdict.exitCode()).isEqualTo(1);
        assertThat(verdict.details()).contains("problem: key k1 could not be read back in 20 attempts");
    }
}
