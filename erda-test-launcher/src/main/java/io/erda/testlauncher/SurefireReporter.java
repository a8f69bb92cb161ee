package io.erda.testlauncher;

import io.erda.testlauncher.SurefireFormat.Counts;
import io.erda.testlauncher.SurefireFormat.Problem;
import java.io.FileOutputStream;
import java.io.IOException;
import java.io.PrintStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.junit.platform.engine.TestExecutionResult;
import org.junit.platform.engine.TestSource;
import org.junit.platform.engine.support.descriptor.ClassSource;
import org.junit.platform.engine.support.descriptor.MethodSource;
import org.junit.platform.launcher.TestExecutionListener;
import org.junit.platform.launcher.TestIdentifier;
import org.junit.platform.launcher.TestPlan;

/**
 * Counts and prints results per top-level test class as Surefire does (nested classes count in their outer class).
 * A failed container (a {@code @BeforeAll} or {@code @AfterAll} that threw, a method source that failed) counts as
 * one run test with a failure or error, as in Surefire. While a class runs, {@code System.out} and
 * {@code System.err} go to {@code REPORTS/CLASS-output.txt} when a reports directory is given (Surefire's
 * redirectTestOutputToFile); the report itself always goes to the launcher's own stdout.
 */
final class SurefireReporter implements TestExecutionListener {
    private final PrintStream out;
    private final PrintStream realOut = System.out;
    private final PrintStream realErr = System.err;
    private final Path reportsDir;
    private final StateFile state;
    private final Map<String, ClassRun> classes = new HashMap<>();
    private final Map<String, Long> started = new HashMap<>();
    private final Counts total = new Counts();
    private final List<Problem> problems = new ArrayList<>();
    private TestPlan plan;
    private ClassRun current;
    private volatile boolean finished;

    private static final class ClassRun {
        final String name;
        final long start = System.nanoTime();
        final Counts counts = new Counts();
        final StringBuilder details = new StringBuilder();
        PrintStream output;

        ClassRun(String name) {
            this.name = name;
        }
    }

    SurefireReporter(PrintStream out, Path reportsDir, StateFile state) {
        this.out = out;
        this.reportsDir = reportsDir;
        this.state = state;
    }

    Counts total() {
        return total;
    }

    List<Problem> problems() {
        return problems;
    }

    boolean finished() {
        return finished;
    }

    /** The class that runs now, if any (for a JVM that is being killed). */
    synchronized Optional<String> runningClass() {
        return Optional.ofNullable(current).map(c -> c.name);
    }

    @Override
    public synchronized void testPlanExecutionStarted(TestPlan testPlan) {
        plan = testPlan;
        SurefireFormat.header(out);
        record("start");
    }

    @Override
    public synchronized void testPlanExecutionFinished(TestPlan testPlan) {
        finished = true;
        record("end", Long.toString(total.run), Long.toString(total.failures), Long.toString(total.errors),
                Long.toString(total.skipped));
    }

    @Override
    public synchronized void executionStarted(TestIdentifier id) {
        started.put(id.getUniqueId(), System.nanoTime());
        if (isTopLevel(id)) {
            startClass(id);
        }
        if (id.isTest()) {
            record("test", classOf(id).name, testName(id));
        }
    }

    @Override
    public synchronized void executionSkipped(TestIdentifier id, String reason) {
        boolean top = isTopLevel(id);
        if (top) {
            startClass(id);
        }
        ClassRun c = classOf(id);
        long n = id.isTest() ? 1 : Math.max(1, countTests(id));
        c.counts.run += n;
        c.counts.skipped += n;
        record("outcome", c.name, "S", Long.toString(n));
        if (top) {
            finishClass(id, c);
        }
    }

    @Override
    public synchronized void executionFinished(TestIdentifier id, TestExecutionResult result) {
        long nanos = System.nanoTime() - started.getOrDefault(id.getUniqueId(), System.nanoTime());
        boolean root = plan.getParent(id).isEmpty();
        if (root && result.getStatus() != TestExecutionResult.Status.FAILED) {
            return; // an engine that ran
        }
        ClassRun c = root ? engineRun(id) : classOf(id);
        switch (result.getStatus()) {
            case SUCCESSFUL -> {
                if (id.isTest()) {
                    c.counts.run++;
                    record("outcome", c.name, "P");
                }
            }
            case ABORTED -> { // an assumption failed: skipped, in a test or a container
                long n = id.isTest() ? 1 : Math.max(1, countTests(id));
                c.counts.run += n;
                c.counts.skipped += n;
                record("outcome", c.name, "S", Long.toString(n));
            }
            case FAILED -> {
                Throwable t = result.getThrowable().orElseGet(() -> new AssertionError("failed without a throwable"));
                boolean failure = SurefireFormat.isFailure(t);
                c.counts.run++;
                if (failure) {
                    c.counts.failures++;
                } else {
                    c.counts.errors++;
                }
                record("outcome", c.name, failure ? "F" : "E");
                String testClass = testClassOf(id).orElse(c.name);
                Problem p = new Problem(failure ? 'F' : 'E', SurefireFormat.summary(testClass, methodName(id), t));
                problems.add(p);
                record("problem", String.valueOf(p.kind()), p.summary());
                c.details.append(SurefireFormat.testLine(testName(id), nanos, failure)).append('\n')
                        .append(SurefireFormat.trace(t, SurefireFormat.withSuperclasses(testClass))).append('\n');
            }
        }
        if (root || isTopLevel(id)) {
            finishClass(id, c);
        }
    }

    private void startClass(TestIdentifier id) {
        ClassRun c = new ClassRun(className(id));
        classes.put(id.getUniqueId(), c);
        current = c;
        SurefireFormat.running(out, c.name);
        record("running", c.name);
        if (reportsDir != null) {
            try {
                Files.createDirectories(reportsDir);
                c.output = new PrintStream(new FileOutputStream(reportsDir.resolve(c.name + "-output.txt").toFile(), true),
                        true, StandardCharsets.UTF_8);
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
            System.setOut(c.output);
            System.setErr(c.output);
        }
    }

    private void finishClass(TestIdentifier id, ClassRun c) {
        long nanos = System.nanoTime() - c.start;
        if (c.output != null) {
            System.setOut(realOut);
            System.setErr(realErr);
            c.output.close();
        }
        out.println(SurefireFormat.classLine(c.counts, nanos, c.name));
        if (!c.details.isEmpty()) {
            out.print(c.details);
        }
        out.flush();
        record("class", c.name, Long.toString(c.counts.run), Long.toString(c.counts.failures),
                Long.toString(c.counts.errors), Long.toString(c.counts.skipped), Long.toString(nanos));
        total.add(c.counts);
        classes.remove(id.getUniqueId());
        current = null;
    }

    /** A failed engine (discovery failed, say) is reported as a class named after the engine. */
    private ClassRun engineRun(TestIdentifier engine) {
        ClassRun c = new ClassRun(engine.getDisplayName());
        classes.put(engine.getUniqueId(), c);
        SurefireFormat.running(out, c.name);
        record("running", c.name);
        return c;
    }

    private void record(String... fields) {
        if (state != null) {
            state.write(fields);
        }
    }

    private boolean isTopLevel(TestIdentifier id) {
        return plan.getParent(id).map(p -> plan.getParent(p).isEmpty()).orElse(false);
    }

    private ClassRun classOf(TestIdentifier id) {
        TestIdentifier top = id;
        while (!isTopLevel(top) && plan.getParent(top).isPresent()) {
            top = plan.getParent(top).get();
        }
        TestIdentifier t = top;
        return classes.computeIfAbsent(top.getUniqueId(), k -> new ClassRun(className(t)));
    }

    private long countTests(TestIdentifier container) {
        long n = 0;
        for (TestIdentifier child : plan.getChildren(container)) {
            n += child.isTest() ? 1 : countTests(child);
        }
        return n;
    }

    private static String className(TestIdentifier id) {
        return id.getSource().flatMap(SurefireReporter::sourceClass).orElse(id.getDisplayName());
    }

    private static Optional<String> sourceClass(TestSource source) {
        if (source instanceof ClassSource cs) {
            return Optional.of(cs.getClassName());
        }
        if (source instanceof MethodSource ms) {
            return Optional.of(ms.getClassName());
        }
        return Optional.empty();
    }

    /** The class whose frames a trace is cut at: the test's own (nested) class. */
    private Optional<String> testClassOf(TestIdentifier id) {
        String top = classOf(id).name;
        return id.getSource().flatMap(SurefireReporter::sourceClass)
                .map(c -> c.startsWith(top + "$") ? top : c); // frames of nested classes count with their outer class
    }

    private static String methodName(TestIdentifier id) {
        return id.getSource().filter(MethodSource.class::isInstance).map(s -> ((MethodSource) s).getMethodName())
                .orElse(id.getLegacyReportingName());
    }

    /** As Surefire names a test: the top-level class, then the JUnit legacy name (parameters and index if any). */
    private String testName(TestIdentifier id) {
        if (isTopLevel(id) || plan.getParent(id).isEmpty()) {
            return className(id);
        }
        if (id.getSource().orElse(null) instanceof ClassSource cs) {
            return cs.getClassName(); // a nested class
        }
        String legacy = id.getLegacyReportingName();
        if (legacy.endsWith("()")) {
            legacy = legacy.substring(0, legacy.length() - 2);
        }
        return classOf(id).name + "." + legacy;
    }
}
