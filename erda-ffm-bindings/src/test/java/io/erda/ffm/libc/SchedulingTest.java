package io.erda.ffm.libc;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;

/**
 * {@code sched_setscheduler(2)}, {@code setpriority(2)} and the affinity calls through {@link Scheduling}, on threads of
 * their own (the runner's stays as it was).
 */
class SchedulingTest {
    @Test
    void aThreadGoesIntoTheFifoClassAsTheKernelReportsOrIsToldItLacksThePrivilege() throws Exception {
        Object outcome = onAThreadOfItsOwn(() -> {
            Scheduling.fifo(1);
            return policyOfThisThread();
        });
        assertTakenOrRefusedForLackOfPrivilege(outcome, "policy in /proc/thread-self/stat", Scheduling.SCHED_FIFO,
                "sched_setscheduler(0, SCHED_FIFO, 1) failed: EPERM");
    }

    @Test
    void aPriorityOutsideTheRealTimeRangeIsRefusedNamingItAndTheErrno() throws Exception {
        Object thrown = onAThreadOfItsOwn(() -> {
            Scheduling.fifo(0); // SCHED_FIFO takes 1 to 99: EINVAL before any privilege check
            return "no exception";
        });
        assertThat(thrown).isInstanceOfSatisfying(UncheckedIOException.class,
                e -> assertThat(e).hasMessageContaining("sched_setscheduler(0, SCHED_FIFO, 0) failed: EINVAL"));
    }

    /**
     * Each CPU this thread may use: a thread pinned to it is allowed that CPU alone (the kernel's
     * Cpus_allowed_list), and runs there; the runner's thread keeps its mask.
     */
    @Test
    void aThreadPinnedToACpuMayRunOnThatCpuAlone() throws Exception {
        int[] allowed = Scheduling.allowedCpus();
        assertThat(allowed).as("the CPUs this thread may use").isNotEmpty()
                .hasSizeLessThanOrEqualTo(Runtime.getRuntime().availableProcessors());
        for (int cpu : allowed) {
            Object outcome = onAThreadOfItsOwn(() -> {
                Scheduling.pin(cpu);
                return java.util.List.of(cpusAllowedListOfThisThread(), java.util.Arrays.toString(
                        Scheduling.allowedCpus()), processorOfThisThread());
            });
            assertThat(outcome).as("pinned to %d", cpu)
                    .isEqualTo(java.util.List.of(Integer.toString(cpu), "[" + cpu + "]", cpu));
        }
        assertThat(Scheduling.allowedCpus()).containsExactly(allowed);
    }

    @Test
    void aCpuOutsideTheMaskIsRefusedNamingIt() throws Exception {
        Object thrown = onAThreadOfItsOwn(() -> {
            Scheduling.pin(1023); // no machine here has it: EINVAL, no CPU in the mask it may use
            return "no exception";
        });
        assertThat(thrown).isInstanceOfSatisfying(UncheckedIOException.class,
                e -> assertThat(e).hasMessageContaining("sched_setaffinity(0, 128, cpu 1023) failed: EINVAL"));
        assertThatThrownBy(() -> Scheduling.pin(1024)).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("cpu 1024 is outside 0 to 1023");
    }

    private static String cpusAllowedListOfThisThread() throws java.io.IOException {
        return Files.readAllLines(Path.of("/proc/thread-self/status")).stream()
                .filter(l -> l.startsWith("Cpus_allowed_list:")).map(l -> l.substring(l.indexOf(':') + 1).trim())
                .findFirst().orElseThrow();
    }

    /** Field 39 of /proc/thread-self/stat: the CPU the thread last ran on. */
    private static int processorOfThisThread() throws java.io.IOException {
        return statField(39);
    }

    /** A thread's nice value is its own: the kernel reports it for that thread, the runner's thread keeps its own. */
    @Test
    void aThreadsNiceValueIsSetForThatThreadAlone() throws Exception {
        int runner = niceOfThisThread();
        Object outcome = onAThreadOfItsOwn(() -> {
            Scheduling.nice(10);
            return niceOfThisThread();
        });
        assertThat(outcome).as("nice in /proc/thread-self/stat").isEqualTo(10);
        assertThat(niceOfThisThread()).isEqualTo(runner);
    }

    /** Lowering a thread's nice value below its own is refused without the privilege, naming value and errno. */
    @Test
    void aLowerNiceValueIsRefusedWithoutThePrivilegeOrTakes() throws Exception {
        Object outcome = onAThreadOfItsOwn(() -> {
            Scheduling.nice(19);
            Scheduling.nice(5);
            return niceOfThisThread();
        });
        assertTakenOrRefusedForLackOfPrivilege(outcome, "nice of a privileged thread", 5,
                "setpriority(PRIO_PROCESS, 0, 5) failed: EACCES");
    }

    /**
     * A call that needs CAP_SYS_NICE: on a privileged runner it took ({@code outcome} is what the kernel reports,
     * {@code taken}); without the privilege it was refused with {@code refusal}, naming CAP_SYS_NICE.
     */
    private static void assertTakenOrRefusedForLackOfPrivilege(Object outcome, String what, Object taken, String refusal) {
        if (outcome instanceof UncheckedIOException refused) {
            assertThat(refused).hasMessageContaining(refusal).hasMessageContaining("CAP_SYS_NICE");
        } else {
            assertThat(outcome).as(what).isEqualTo(taken);
        }
    }

    /** Field 19 of /proc/thread-self/stat: the nice value. */
    private static int niceOfThisThread() throws java.io.IOException {
        return statField(19);
    }

    /** Field 41 of /proc/thread-self/stat: the scheduling policy. */
    private static int policyOfThisThread() throws java.io.IOException {
        return statField(41);
    }

    /** Field {@code n} (man 5 proc, from 1) of this thread's /proc/thread-self/stat, a number. */
    private static int statField(int n) throws java.io.IOException {
        String stat = Files.readString(Path.of("/proc/thread-self/stat"));
        String[] after = stat.substring(stat.lastIndexOf(')') + 2).split(" "); // fields from 3 (state) on
        return Integer.parseInt(after[n - 3]);
    }

    /** Runs {@code work} on a platform thread of its own; returns its result, or what it threw. */
    private static Object onAThreadOfItsOwn(java.util.concurrent.Callable<Object> work) throws InterruptedException {
        AtomicReference<Object> outcome = new AtomicReference<>();
        Thread t = Thread.ofPlatform().start(() -> {
            try {
                outcome.set(work.call());
            } catch (Exception e) {
                outcome.set(e);
            }
        });
        t.join();
        return outcome.get();
    }
}
