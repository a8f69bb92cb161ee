package io.erda.testlauncher;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Disabled;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestMethodOrder;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * The launcher on fixture classes (static nested classes: neither Surefire nor JUnit run them on their own), checked
 * against the lines Surefire 3.5 prints for the same kinds of outcome.
 */
class SurefireStyleLauncherTest {
    @TempDir
    Path tmp;

    static class Passing {
        @Test
        void one() {
        }

        @Test
        void two() {
        }
    }

    static class Mixed {
        @Test
        void passes() {
        }

        @Test
        void assertionFails() {
            assertThat(1).as("the answer").isEqualTo(2);
        }

        @Test
        void throwsState() {
            helper();
        }

        private static void helper() {
            throw new IllegalStateException("server did not start\nsecond line");
        }

        @Disabled("no RDMA device")
        @Test
        void disabled() {
        }

        @Test
        void assumption() {
            Assumptions.assumeTrue(false, "no RDMA device (rxe0) in this VM");
        }

        @ParameterizedTest
        @ValueSource(strings = {"tcp", "verbs"})
        void param(String fabric) {
            assertThat(fabric).isEqualTo("tcp");
        }
    }

    static class BeforeAllFails {
        @BeforeAll
        static void up() {
            throw new IllegalStateException("no server");
        }

        @Test
        void a() {
        }

        @Test
        void b() {
        }
    }

    abstract static class Base {
        @Test
        void inherited() {
            assertThat("rxe0").isEqualTo("soft");
        }
    }

    /** As the conformance suite's subclasses: the test method and its frames are the superclass's. */
    static class Sub extends Base {
    }

    @Tag("fixture-only")
    static class Tagged {
        @Test
        void a() {
        }
    }

    /** Dies as a JVM crash would (no shutdown hooks), only when the child JVM of a test asks for it. */
    @TestMethodOrder(MethodOrderer.OrderAnnotation.class)
    static class Halting {
        @Test
        @Order(1)
        void first() {
        }

        @Test
        @Order(2)
        void dies() {
            if (Boolean.getBoolean("launcher.fixture.halt")) {
                Runtime.getRuntime().halt(134);
            }
        }
    }

    /**
     * Blocks until the JVM is signalled, only when the child JVM of a test asks for it (the property names a file it
     * creates once in the method that waits).
     */
    static class Hanging {
        @Test
        void hangs() throws Exception {
            String waiting = System.getProperty("launcher.fixture.hang");
            if (waiting != null) {
                waitsForTheSignal(Path.of(waiting));
            }
        }

        private static void waitsForTheSignal(Path waiting) throws Exception {
            Files.createFile(waiting);
            new java.util.concurrent.CountDownLatch(1).await();
        }
    }

    private record Run(int status, String out) {
        List<String> lines() {
            return out.lines().toList();
        }
    }

    private static Run launch(String... args) {
        ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        int status = SurefireStyleLauncher.run(args, new PrintStream(bytes, true, StandardCharsets.UTF_8));
        return new Run(status, bytes.toString(StandardCharsets.UTF_8));
    }

    private static String fixture(String name) {
        return SurefireStyleLauncherTest.class.getName() + "$" + name;
    }

    @Test
    void passingClassPrintsInfoLinesAndExitsZero() {
        Run run = launch("--class", fixture("Passing"));
        assertThat(run.status()).isZero();
        assertThat(run.lines()).contains("[INFO]  T E S T S", "[INFO] Running " + fixture("Passing"), "[INFO] Results:");
        assertThat(run.lines()).anyMatch(l -> l.matches("\\[INFO] Tests run: 2, Failures: 0, Errors: 0, Skipped: 0, "
                + "Time elapsed: [0-9.]+ s -- in " + java.util.regex.Pattern.quote(fixture("Passing"))));
        assertThat(run.lines().getLast()).isEqualTo("[INFO] Tests run: 2, Failures: 0, Errors: 0, Skipped: 0");
    }

    @Test
    void failuresAndErrorsAreCountedAndListedAsSurefireDoes() {
        Run run = launch("--class", fixture("Mixed"));
        assertThat(run.status()).isEqualTo(1);
        String mixed = fixture("Mixed");
        // 7 tests: passes, assertionFails, throwsState, disabled, assumption, param[1], param[2]
        assertThat(run.lines()).anyMatch(l -> l.startsWith("[ERROR] Tests run: 7, Failures: 2, Errors: 1, Skipped: 2, Time elapsed: ")
                && l.endsWith(" s <<< FAILURE! -- in " + mixed));
        assertThat(run.lines()).anyMatch(l -> l.matches("\\[ERROR] " + java.util.regex.Pattern.quote(mixed + ".assertionFails")
                + " -- Time elapsed: [0-9.]+ s <<< FAILURE!"));
        assertThat(run.lines()).anyMatch(l -> l.startsWith("[ERROR] " + mixed + ".param(String)[2] -- Time elapsed: "));
        assertThat(run.lines()).anyMatch(l -> l.startsWith("[ERROR] " + mixed + ".throwsState -- Time elapsed: ")
                && l.endsWith(" s <<< ERROR!"));
        assertThat(run.out()).contains("java.lang.IllegalStateException: \nserver did not start\nsecond line\n\tat "
                + mixed + ".helper(");
        int results = run.lines().indexOf("[INFO] Results:");
        assertThat(run.lines().subList(results, run.lines().size())).containsExactly(
                "[INFO] Results:",
                "[INFO] ",
                "[ERROR] Failures: ",
                "[ERROR]   SurefireStyleLauncherTest$Mixed.assertionFails:50 [the answer] expected: 2 but was: 1",
                "[ERROR]   SurefireStyleLauncherTest$Mixed.param:75 expected: \"tcp\" but was: \"verbs\"",
                "[ERROR] Errors: ",
                "[ERROR]   SurefireStyleLauncherTest$Mixed.throwsState:55->helper:59 IllegalState server did not start second line",
                "[INFO] ",
                "[ERROR] Tests run: 7, Failures: 2, Errors: 1, Skipped: 2");
    }

    @Test
    void aFailedBeforeAllIsOneErrorOfTheClass() {
        Run run = launch("--class", fixture("BeforeAllFails"));
        assertThat(run.status()).isEqualTo(1);
        assertThat(run.lines()).anyMatch(l -> l.startsWith("[ERROR] Tests run: 1, Failures: 0, Errors: 1, Skipped: 0, "));
        assertThat(run.lines()).anyMatch(l -> l.startsWith("[ERROR] " + fixture("BeforeAllFails") + " -- Time elapsed: "));
        assertThat(run.lines()).contains("[ERROR]   SurefireStyleLauncherTest$BeforeAllFails.up:82 IllegalState no server");
    }

    @Test
    void anInheritedTestIsCutAtItsSuperclassFramesAndNamedAfterTheTestClass() {
        Run run = launch("--class", fixture("Sub"));
        assertThat(run.status()).isEqualTo(1);
        assertThat(run.out()).contains("[ERROR] " + fixture("Sub") + ".inherited -- Time elapsed: ", "\tat "
                + fixture("Base") + ".inherited(SurefireStyleLauncherTest.java:");
        assertThat(run.lines()).anyMatch(l -> l.matches("\\[ERROR]   SurefireStyleLauncherTest\\$Sub\\.inherited:[0-9]+ "
                + "expected: \"soft\" but was: \"rxe0\""));
    }

    @Test
    void excludedTagsAreNotRunAndNoTestRunIsAnError() {
        Run run = launch("--class", fixture("Tagged"), "--exclude-tag", "fixture-only");
        assertThat(run.status()).isEqualTo(1);
        assertThat(run.lines()).contains("[ERROR] No tests were executed!");
        assertThat(run.lines().getLast()).isEqualTo("[ERROR] Tests run: 0, Failures: 0, Errors: 0, Skipped: 0");
        assertThat(launch("--class", fixture("Tagged"), "--include-tag", "fixture-only").status()).isZero();
    }

    @Test
    void testOutputGoesToTheReportsDirectory() throws Exception {
        Run run = launch("--class", fixture("Passing"), "--reports-dir", tmp.toString());
        assertThat(run.status()).isZero();
        assertThat(tmp.resolve(fixture("Passing") + "-output.txt")).exists();
    }

    @Test
    void aggregateAddsTheRunsUp() throws Exception {
        Path passing = tmp.resolve("passing.state");
        Path mixed = tmp.resolve("mixed.state");
        launch("--class", fixture("Passing"), "--state", passing.toString(), "--no-summary");
        launch("--class", fixture("Mixed"), "--state", mixed.toString(), "--no-summary");
        Files.writeString(passing, "exit\t0\n", java.nio.file.StandardOpenOption.APPEND);
        Files.writeString(mixed, "exit\t1\n", java.nio.file.StandardOpenOption.APPEND);
        Run run = aggregate(passing, mixed);
        assertThat(run.status()).isEqualTo(1);
        assertThat(run.lines().getLast()).isEqualTo("[ERROR] Tests run: 9, Failures: 2, Errors: 1, Skipped: 2");
        assertThat(aggregate(passing).status()).isZero();
        assertThat(aggregate(passing).lines().getLast()).isEqualTo("[INFO] Tests run: 2, Failures: 0, Errors: 0, Skipped: 0");
    }

    @Test
    void aRunThatNeverStartedIsAnError() throws Exception {
        Run run = aggregate(tmp.resolve("fabric-rdmacm.state"));
        assertThat(run.status()).isEqualTo(1);
        assertThat(run.lines()).contains("[ERROR] Tests run: 1, Failures: 0, Errors: 1, Skipped: 0, Time elapsed: 0 s <<< FAILURE! -- in fabric-rdmacm");
        assertThat(run.lines()).anyMatch(l -> l.startsWith("[ERROR]   fabric-rdmacm » did not run"));
    }

    /** A real JVM that dies in the middle of a class: the class is reported with the dying test as an error. */
    @Test
    void aJvmThatDiesMidClassIsReportedAsAnErrorOfThatClassAndTest() throws Exception {
        Path state = tmp.resolve("halting.state");
        List<String> command = childLauncher("-Dlauncher.fixture.halt=true", state,
                "--method", fixture("Halting") + "#first", "--method", fixture("Halting") + "#dies");
        Process p = new ProcessBuilder(command).redirectErrorStream(true).start();
        String childOut = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertThat(p.waitFor(60, TimeUnit.SECONDS)).isTrue();
        assertThat(p.exitValue()).as(childOut).isEqualTo(134);
        Files.writeString(state, "exit\t134\n", java.nio.file.StandardOpenOption.APPEND);

        Run run = aggregate(state);
        assertThat(run.status()).isEqualTo(1);
        String halting = fixture("Halting");
        assertThat(run.lines()).contains("[ERROR] Tests run: 2, Failures: 0, Errors: 1, Skipped: 0, Time elapsed: 0 s <<< FAILURE! -- in " + halting,
                "[ERROR] " + halting + ".dies -- Time elapsed: 0 s <<< ERROR!");
        assertThat(run.lines()).anyMatch(l -> l.startsWith("[ERROR]   SurefireStyleLauncherTest$Halting.dies » JvmExit the JVM exited with status 134"));
        assertThat(run.lines().getLast()).isEqualTo("[ERROR] Tests run: 2, Failures: 0, Errors: 1, Skipped: 0");
    }

    /**
     * A JVM killed by a timeout's SIGTERM while a test hangs: the error names the test and, since the thread dump
     * stays on the machine that ran it, the frames the test was in.
     */
    @Test
    void aKilledJvmSaysWhereTheTestWas() throws Exception {
        Path state = tmp.resolve("hanging.state");
        Path waiting = tmp.resolve("waiting");
        List<String> command = childLauncher("-Dlauncher.fixture.hang=" + waiting, state,
                "--reports-dir", tmp.toString(), "--class", fixture("Hanging"));
        Process p = new ProcessBuilder(command).redirectErrorStream(true).redirectOutput(tmp.resolve("child.txt").toFile())
                .start();
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
        while (!Files.exists(waiting) && p.isAlive() && System.nanoTime() < deadline) {
            Thread.sleep(20);
        }
        assertThat(waiting).as("the child reached the method that waits; its output: %s", tmp.resolve("child.txt")).exists();
        p.destroy(); // SIGTERM, as timeout sends
        assertThat(p.waitFor(60, TimeUnit.SECONDS)).isTrue();
        Files.writeString(state, "exit\t" + p.exitValue() + "\n", java.nio.file.StandardOpenOption.APPEND);

        Run run = aggregate(state);
        assertThat(run.status()).isEqualTo(1);
        assertThat(run.lines()).anyMatch(l -> l.startsWith("[ERROR]   SurefireStyleLauncherTest$Hanging.hangs » JvmExit")
                && l.contains("; the test thread was at ")
                && l.contains("SurefireStyleLauncherTest$Hanging.waitsForTheSignal:")
                && l.contains(" < SurefireStyleLauncherTest$Hanging.hangs:"));
    }

    /** A launcher JVM of its own on this class path, with a fixture's system property, writing {@code state}. */
    private static List<String> childLauncher(String property, Path state, String... selection) {
        List<String> command = new ArrayList<>(List.of(ProcessHandle.current().info().command().orElse("java"), property,
                "-cp", System.getProperty("java.class.path"), SurefireStyleLauncher.class.getName(), "--no-summary",
                "--state", state.toString()));
        command.addAll(List.of(selection));
        return command;
    }

    private static Run aggregate(Path... states) throws Exception {
        ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        int status = Aggregate.run(List.of(states), new PrintStream(bytes, true, StandardCharsets.UTF_8));
        return new Run(status, bytes.toString(StandardCharsets.UTF_8));
    }
}
