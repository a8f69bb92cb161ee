package io.erda.bench.store;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * The hiccup probe of scale-bench: a real probe process, stopped by the kernel for a while, must report it on every CPU
 * it probes.
 */
class HiccupProbeTest {
    @Test
    void aProbeProcessStoppedFor50MillisecondsReportsAHiccupOnThisProcesssClock() throws Exception {
        long stoppedAt;
        long resumedAt;
        long runningNanos;
        HiccupProbe probe = new HiccupProbe(TimeUnit.MILLISECONDS.toNanos(5));
        long started = System.nanoTime();
        try {
            Thread.sleep(200);
            stoppedAt = System.nanoTime();
            signal(probe.pid(), "-STOP");
            Thread.sleep(50);
            resumedAt = System.nanoTime();
            signal(probe.pid(), "-CONT");
            Thread.sleep(200);
        } finally {
            runningNanos = System.nanoTime() - started;
            probe.close();
        }
        long periods = runningNanos / HiccupProbe.PERIOD_NANOS;
        int[] cpus = io.erda.ffm.libc.Scheduling.allowedCpus(); // the probe inherits this process's

        assertThat(probe.scheduling()).as("SCHED_FIFO, or the normal class and why; its threads' CPUs")
            .contains("one thread pinned to each of cpus " + java.util.Arrays.toString(cpus));
        assertThat(probe.lateness().wakeUps()).as("at most one wake-up per millisecond of %d per CPU, and most", periods)
            .isBetween(periods * cpus.length / 3, (periods + 20) * cpus.length); // it runs on a little after close
        for (int cpu : cpus) {
            assertThat(probe.hiccups()).as("the stop, on cpu %d: a wake-up late by about its length, due while stopped",
                    cpu)
                .anySatisfy(h -> {
                    assertThat(h.what()).contains("on cpu " + cpu + " ");
                    assertThat(h.nanos()).isGreaterThanOrEqualTo(TimeUnit.MILLISECONDS.toNanos(40));
                    assertThat(h.startNanos()).isBetween(stoppedAt - HiccupProbe.PERIOD_NANOS, resumedAt);
                });
        }
        assertThat(probe.hiccups()).as("oldest first").isSortedAccordingTo(
            java.util.Comparator.comparingLong(Pauses.Pause::startNanos));
        assertThat(probe.lateness().maxMicros()).isGreaterThanOrEqualTo(40_000);
    }

    private static void signal(long pid, String signal) throws Exception {
        Process kill = new ProcessBuilder("kill", signal, Long.toString(pid)).inheritIO().start();
        assertThat(kill.waitFor(10, TimeUnit.SECONDS)).isTrue();
        assertThat(kill.exitValue()).isZero();
    }
}
