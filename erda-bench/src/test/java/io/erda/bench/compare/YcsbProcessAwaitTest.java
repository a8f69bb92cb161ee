package io.erda.bench.compare;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.InputStream;
import java.io.OutputStream;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/** {@link YcsbProcess#awaitAll}: the YCSB processes of one run, waited for together. */
class YcsbProcessAwaitTest {
    /**
     * A process that is alive when the loop looks at it and has exited when it picks one to wait on (it ended in
     * between): the wait returns, it does not fail the run (it threw NoSuchElementException and ended a whole
     * ycsb-compare).
     */
    @Test
    void aProcessThatEndsBetweenTheLoopsTwoLooksEndsTheWait() throws Exception {
        ScriptedProcess p = new ScriptedProcess(1, 0); // alive for its first isAlive only

        YcsbProcess.awaitAll("A", List.of(p), Duration.ofSeconds(5), List.of(Path.of("err")));

        assertThat(p.looks.get()).isGreaterThanOrEqualTo(3);
    }

    @Test
    void oneFailedProcessEndsTheOthers() throws Exception {
        ScriptedProcess failed = new ScriptedProcess(0, 1);
        ScriptedProcess running = new ScriptedProcess(Integer.MAX_VALUE, 0);

        YcsbProcess.awaitAll("A", List.of(failed, running), Duration.ofSeconds(5), List.of(Path.of("err")));

        assertThat(running.destroyed).isTrue();
    }

    @Test
    void processesStillRunningAtTheDeadlineFailTheRunNamingIt() {
        ScriptedProcess running = new ScriptedProcess(Integer.MAX_VALUE, 0);

        assertThatThrownBy(() -> YcsbProcess.awaitAll("B", List.of(running), Duration.ofMillis(200),
                List.of(Path.of("b.err")))).isInstanceOf(YcsbProcess.FailedRun.class)
            .hasMessageContaining("YCSB B did not finish within 0 s (see b.err)");
        assertThat(running.destroyed).isTrue();
    }

    /** Alive for its first {@code aliveLooks} calls of isAlive (or until destroyed), then exited with {@code exit}. */
    private static final class ScriptedProcess extends Process {
        final AtomicInteger looks = new AtomicInteger();
        final int aliveLooks;
        final int exit;
        volatile boolean destroyed;

        ScriptedProcess(int aliveLooks, int exit) {
            this.aliveLooks = aliveLooks;
            this.exit = exit;
        }

        @Override
        public boolean isAlive() {
            return !destroyed && looks.incrementAndGet() <= aliveLooks;
        }

        @Override
        public boolean waitFor(long timeout, TimeUnit unit) throws InterruptedException {
            Thread.sleep(Math.min(unit.toMillis(timeout), 20));
            return !isAlive();
        }

        @Override
        public int waitFor() {
            return exit;
        }

        @Override
        public int exitValue() {
            return exit;
        }

        @Override
        public Process destroyForcibly() {
            destroyed = true;
            return this;
        }

        @Override
        public void destroy() {
            destroyed = true;
        }

        @Override
        public OutputStream getOutputStream() {
            return OutputStream.nullOutputStream();
        }

        @Override
        public InputStream getInputStream() {
            return InputStream.nullInputStream();
        }

        @Override
        public InputStream getErrorStream() {
            return InputStream.nullInputStream();
        }
    }
}
