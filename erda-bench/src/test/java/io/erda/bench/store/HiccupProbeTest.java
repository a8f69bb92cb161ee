package io.erda.bench.store;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/** The hiccup probe of scale-bench: a real probe process, stopped by the kernel for a while, must report it. */
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

        assertThat(probe.scheduling()).as("SCHED_FIFO, or the normal class and why").isNotBlank();
        assertThat(probe.lateness().wakeUps()).as("at most one wake-up per millisecond of %d, and most of them", periods)
            .isBetween(periods / 3, periods + 20); // it runs on a little while close asks it to stop
        assertThat(probe.hiccups()).as("the stop, as a wake-up late by about its length, due while stopped")
            .anySatisfy(h -> {
                assertThat(h.nanos()).isGreaterThanOrEqualTo(TimeUnit.MILLISECONDS.toNanos(40));
                assertThat(h.startNanos()).isBetween(stoppedAt - HiccupProbe.PERIOD_NANOS, resumedAt);
            });
        assertThat(probe.lateness().maxMicros()).isGreaterThanOrEqualTo(40_000);
    }

    private static void signal(long pid, String signal) throws Exception {
        Process kill = new ProcessBuilder("kill", signal, Long.toString(pid)).inheritIO().start();
        assertThat(kill.waitFor(10, TimeUnit.SECONDS)).isTrue();
        assertThat(kill.exitValue()).isZero();
    }
}
