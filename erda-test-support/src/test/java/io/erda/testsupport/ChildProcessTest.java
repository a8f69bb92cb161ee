package io.erda.testsupport;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.file.Path;
import java.time.Duration;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Real child JVMs ({@link Child}): ready line, kill -9, SIGTERM, pause and resume, and the failures to start. */
class ChildProcessTest {
    private static final Pattern LISTENING = Pattern.compile("listening on (\\S+)");

    @TempDir
    Path dir;

    private ChildProcess.Builder child(String... args) {
        return ChildProcess.java(Child.class.getName()).jvmOptions(java.util.List.of("-Xmx32m")).args(args)
                .log(dir.resolve("logs").resolve("child.log")).ready(LISTENING).timeout(Duration.ofSeconds(30));
    }

    @Test
    void startReturnsTheReadyLinesValueAndKillEndsTheChild() throws Exception {
        try (ChildProcess c = child("ready", "tcp://127.0.0.1:1234").logCommand(true).start()) {
            assertThat(c.readyValue()).isEqualTo("tcp://127.0.0.1:1234");
            assertThat(c.alive()).isTrue();
            assertThat(c.pid()).isEqualTo(ProcessHandle.of(c.pid()).orElseThrow().pid());
            assertThat(c.logText()).startsWith(Child.class.getName() + " ready tcp://127.0.0.1:1234\n")
                    .contains("child listening on tcp://127.0.0.1:1234");
            c.kill();
            assertThat(c.alive()).isFalse();
            assertThat(c.awaitExit(Duration.ofSeconds(5))).isEqualTo(137);
        }
    }

    @Test
    void stopSendsSigterm() throws Exception {
        ChildProcess c = child("ready", "x").start();
        c.stop();
        assertThat(c.alive()).isFalse();
        assertThat(c.awaitExit(Duration.ofSeconds(5))).isEqualTo(143);
    }

    @Test
    void pauseStopsTheChildAndResumeContinuesIt() throws Exception {
        try (ChildProcess c = child("ready", "x").start()) {
            c.pause();
            assertThat(awaitState(c.pid(), true)).isEqualTo('T');
            c.resume();
            assertThat(awaitState(c.pid(), false)).isNotEqualTo('T');
            assertThat(c.alive()).isTrue();
        }
    }

    @Test
    void resumeAfterTheChildEndedDoesNothing() {
        ChildProcess c = child("ready", "x").start();
        c.pause();
        c.kill();
        c.resume();
        assertThat(c.alive()).isFalse();
    }

    @Test
    void aChildThatExitsBeforeItsReadyLineFailsNamingItsLog() {
        Path log = dir.resolve("logs").resolve("child.log");
        assertThatThrownBy(() -> child("exit", "3").name("failing").start())
                .isInstanceOfSatisfying(ChildProcess.StartFailure.class, e -> {
                    assertThat(e.reason()).isEqualTo("exited with status 3");
                    assertThat(e.log()).isEqualTo(log);
                    assertThat(e.tail()).contains("told to fail");
                })
                .hasMessageContaining("failing (" + Child.class.getName() + " exit 3) failed to start: exited with status 3")
                .hasMessageContaining(log.toString());
    }

    @Test
    void aSilentChildFailsAfterTheTimeoutAndIsKilled() {
        assertThatThrownBy(() -> child("silent").timeout(Duration.ofSeconds(2)).start())
                .isInstanceOfSatisfying(ChildProcess.StartFailure.class,
                        e -> assertThat(e.reason()).isEqualTo("printed no line matching '" + LISTENING + "' within 2 s"));
    }

    @Test
    void withoutAReadyPatternStartReturnsAtOnceAndAwaitExitHasTheWholeOutput() throws Exception {
        ChildProcess c = child("exit", "5").ready(null).start();
        assertThat(c.awaitExit(Duration.ofSeconds(30))).isEqualTo(5);
        assertThat(c.readyValue()).isNull();
        assertThat(c.logText()).contains("starting exit 5", "told to fail");
    }

    @Test
    void appendLogKeepsWhatTheLogHeld() throws Exception {
        Path log = dir.resolve("logs").resolve("child.log");
        child("exit", "0").ready(null).start().awaitExit(Duration.ofSeconds(30));
        child("exit", "1").ready(null).appendLog(true).start().awaitExit(Duration.ofSeconds(30));
        assertThat(java.nio.file.Files.readString(log)).contains("starting exit 0", "starting exit 1");
        child("exit", "2").ready(null).start().awaitExit(Duration.ofSeconds(30));
        assertThat(java.nio.file.Files.readString(log)).contains("starting exit 2").doesNotContain("starting exit 0");
    }

    /** The process's state letter from /proc/PID/stat once it is (or is not) 'T', stopped; at most 2 s. */
    private static char awaitState(long pid, boolean stopped) throws Exception {
        char s = '?';
        for (int i = 0; i < 100; i++) {
            String stat = java.nio.file.Files.readString(Path.of("/proc", Long.toString(pid), "stat"));
            s = stat.charAt(stat.lastIndexOf(')') + 2);
            if ((s == 'T') == stopped) {
                return s;
            }
            Thread.sleep(20);
        }
        return s;
    }
}
