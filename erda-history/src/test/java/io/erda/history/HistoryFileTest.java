package io.erda.history;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.erda.history.Operation.Kind;
import io.erda.history.Operation.Outcome;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Histories written by recorders (threads, and files of several processes) read back as recorded. */
class HistoryFileTest {
    @TempDir
    Path dir;

    @Test
    void whatThreadsRecordReadsBackFromTheFileAsRecorded() throws Exception {
        Path file = dir.resolve("p.history");
        History recorded;
        try (HistoryRecorder recorder = HistoryRecorder.appendingTo(file)) {
            List<Thread> threads = new ArrayList<>();
            for (int p = 0; p < 8; p++) {
                int process = p;
                threads.add(Thread.ofPlatform().start(() -> {
                    for (int i = 0; i < 500; i++) {
                        long w = recorder.invokeWrite(process, "k" + process, i);
                        recorder.ok(w);
                        long r = recorder.invokeRead(process, "k" + process);
                        recorder.ok(r, i);
                        long d = recorder.invokeWrite(process, "k" + process, Operation.ABSENT);
                        if (i % 2 == 0) {
                            recorder.info(d);
                        } else {
                            recorder.fail(d);
                        }
                    }
                    recorder.note(process, "done " + process);
                }));
            }
            for (Thread t : threads) {
                t.join();
            }
            recorded = recorder.history();
        }
        History read = History.read(List.of(file));
        assertThat(read.operations()).hasSize(8 * 500 * 3).containsExactlyInAnyOrderElementsOf(recorded.operations());
        assertThat(read.notes()).containsExactlyInAnyOrderElementsOf(recorded.notes()).hasSize(8);
        assertThat(LinearizabilityChecker.check(read).verdict()).isEqualTo("yes");
    }

    @Test
    void aKilledProcessLeavesItsOperationIndeterminateAndItsCutLineIgnored() throws IOException {
        Path a = dir.resolve("a.history");
        Path b = dir.resolve("b.history");
        Files.writeString(a, """
                invoke 1 0 write k 5 100
                ok 1 0 110
                invoke 1 1 write k absent 120
                ok 1 1 13""");
        Files.writeString(b, "invoke 2 0 read k 200\nok 2 0 210 5\nnote 2 220 server started\n");
        History h = History.read(List.of(a, b));
        assertThat(h.operations()).containsExactly(
                Operation.write(1, "k", 5, 100, 110, Outcome.OK),
                Operation.write(1, "k", Operation.ABSENT, 120, Operation.NEVER, Outcome.INDETERMINATE),
                Operation.read(2, "k", 5, 200, 210, Outcome.OK));
        assertThat(h.notes()).containsExactly(new History.Note(2, 220, "server started"));
        assertThat(h.operations().get(2).kind()).isEqualTo(Kind.READ);
    }

    @Test
    void aDamagedLineIsAnErrorNamingTheFileTheLineAndTheText() throws IOException {
        Path a = dir.resolve("a.history");
        Files.writeString(a, "invoke 1 0 write k 5 100\nok 1 7 110\n");
        assertThatThrownBy(() -> History.read(List.of(a))).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("a.history:2").hasMessageContaining("operation 1 7 completes without an invocation")
                .hasMessageContaining("'ok 1 7 110'");
    }
}
