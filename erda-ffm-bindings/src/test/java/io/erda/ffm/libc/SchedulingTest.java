package io.erda.ffm.libc;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;

/** {@code sched_setscheduler(2)} through {@link Scheduling}, on threads of their own (the runner's stays normal). */
class SchedulingTest {
    @Test
    void aThreadGoesIntoTheFifoClassAsTheKernelReportsOrIsToldItLacksThePrivilege() throws Exception {
        AtomicReference<Object> outcome = new AtomicReference<>();
        Thread t = Thread.ofPlatform().start(() -> {
            try {
                Scheduling.fifo(1);
                outcome.set(policyOfThisThread());
            } catch (UncheckedIOException | java.io.IOException e) {
                outcome.set(e);
            }
        });
        t.join();
        if (outcome.get() instanceof UncheckedIOException refused) {
            assertThat(refused).hasMessageContaining("sched_setscheduler(0, SCHED_FIFO, 1) failed: EPERM")
                    .hasMessageContaining("CAP_SYS_NICE");
        } else {
            assertThat(outcome.get()).as("policy in /proc/thread-self/stat").isEqualTo(Scheduling.SCHED_FIFO);
        }
    }

    @Test
    void aPriorityOutsideTheRealTimeRangeIsRefusedNamingItAndTheErrno() throws Exception {
        AtomicReference<Throwable> thrown = new AtomicReference<>();
        Thread t = Thread.ofPlatform().start(() -> {
            try {
                Scheduling.fifo(0); // SCHED_FIFO takes 1 to 99: EINVAL before any privilege check
            } catch (RuntimeException e) {
                thrown.set(e);
            }
        });
        t.join();
        assertThat(thrown.get()).isInstanceOf(UncheckedIOException.class)
                .hasMessageContaining("sched_setscheduler(0, SCHED_FIFO, 0) failed: EINVAL");
    }

    /** Field 41 of /proc/thread-self/stat: the scheduling policy. */
    private static int policyOfThisThread() throws java.io.IOException {
        String stat = Files.readString(Path.of("/proc/thread-self/stat"));
        String[] after = stat.substring(stat.lastIndexOf(')') + 2).split(" "); // fields from 3 (state) on
        return Integer.parseInt(after[41 - 3]);
    }
}
