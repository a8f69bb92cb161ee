package io.erda.testlauncher;

import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.platform.engine.DiscoverySelector;
import org.junit.platform.engine.discovery.ClassNameFilter;
import org.junit.platform.engine.discovery.DiscoverySelectors;
import org.junit.platform.launcher.Launcher;
import org.junit.platform.launcher.LauncherDiscoveryRequest;
import org.junit.platform.launcher.TagFilter;
import org.junit.platform.launcher.core.LauncherDiscoveryRequestBuilder;
import org.junit.platform.launcher.core.LauncherFactory;

/**
 * Runs JUnit Platform tests on the class path of this JVM and prints the results as Maven Surefire prints them
 * ({@link SurefireFormat}); exits 1 when a test failed or erred, or when no test ran. Made for running a module's
 * tests where Maven cannot run (scripts/test-softroce, inside a VM): put the module's target/test-classes,
 * target/classes and target/test-classpath on the class path. System properties given to this JVM are the tests'
 * (and JUnit's configuration parameters, as under Surefire).
 *
 * <pre>
 * java -cp ... io.erda.testlauncher.SurefireStyleLauncher [options]
 *   --class NAME          a test class (repeatable)
 *   --method NAME         a test method, class#method (repeatable)
 *   --package NAME        every test class in a package and below whose name Surefire would run (*Test, Test*,
 *                         *Tests, *TestCase; no nested classes) (repeatable)
 *   --include-tag EXPR    only tests with these tags (JUnit tag expressions; repeatable)
 *   --exclude-tag EXPR    no tests with these tags (repeatable)
 *   --reports-dir DIR     each class's stdout and stderr go to DIR/CLASS-output.txt (else to this stdout)
 *   --state FILE          append the run's progress to FILE, one record a line, so that a script can report the
 *                         class a crashed or killed JVM was running (see --aggregate)
 *   --no-summary          print the per-class lines only (a script aggregates several runs)
 *
 * java -cp ... io.erda.testlauncher.SurefireStyleLauncher --aggregate STATE_FILE...
 *   the Results section and total line of several runs from their state files; a run whose JVM died (no end
 *   record) counts the class it was running as an error, a missing or empty state file as a run that never started
 * </pre>
 */
public final class SurefireStyleLauncher {
    private static final String SUREFIRE_INCLUDES = "^(.*\\.)?(Test[^.$]*|[^.$]*Test|[^.$]*Tests|[^.$]*TestCase)$";

    private SurefireStyleLauncher() {
    }

    public static void main(String[] args) {
        PrintStream out = new PrintStream(new java.io.FileOutputStream(java.io.FileDescriptor.out), true, StandardCharsets.UTF_8);
        int status;
        try {
            status = args.length > 0 && args[0].equals("--aggregate")
                    ? Aggregate.run(List.of(args).subList(1, args.length).stream().filter(a -> !a.equals("--")).map(Path::of).toList(), out)
                    : run(args, out);
        } catch (IllegalArgumentException e) {
            out.println("[ERROR] " + e.getMessage());
            status = 2;
        }
        out.flush();
        System.exit(status);
    }

    /** Runs the tests the arguments select, printing to {@code out}; returns the exit status. */
    static int run(String[] args, PrintStream out) {
        List<DiscoverySelector> selectors = new ArrayList<>();
        List<String> includeTags = new ArrayList<>();
        List<String> excludeTags = new ArrayList<>();
        boolean packages = false;
        boolean summary = true;
        Path reportsDir = null;
        Path stateFile = null;
        for (int i = 0; i < args.length; i++) {
            String a = args[i];
            switch (a) {
                case "--class" -> selectors.add(DiscoverySelectors.selectClass(value(args, ++i, a)));
                case "--method" -> selectors.add(DiscoverySelectors.selectMethod(value(args, ++i, a)));
                case "--package" -> {
                    selectors.add(DiscoverySelectors.selectPackage(value(args, ++i, a)));
                    packages = true;
                }
                case "--include-tag" -> includeTags.add(value(args, ++i, a));
                case "--exclude-tag" -> excludeTags.add(value(args, ++i, a));
                case "--reports-dir" -> reportsDir = Path.of(value(args, ++i, a));
                case "--state" -> stateFile = Path.of(value(args, ++i, a));
                case "--no-summary" -> summary = false;
                default -> throw new IllegalArgumentException("unknown argument '" + a + "' (see the class comment of "
                        + SurefireStyleLauncher.class.getName() + ")");
            }
        }
        if (selectors.isEmpty()) {
            throw new IllegalArgumentException("nothing selected: give --class, --method or --package");
        }
        LauncherDiscoveryRequestBuilder request = LauncherDiscoveryRequestBuilder.request().selectors(selectors);
        if (packages) {
            request.filters(ClassNameFilter.includeClassNamePatterns(SUREFIRE_INCLUDES));
        }
        if (!includeTags.isEmpty()) {
            request.filters(TagFilter.includeTags(includeTags));
        }
        if (!excludeTags.isEmpty()) {
            request.filters(TagFilter.excludeTags(excludeTags));
        }
        LauncherDiscoveryRequest discovery = request.build();

        StateFile state = stateFile == null ? null : new StateFile(stateFile);
        SurefireReporter reporter = new SurefireReporter(out, reportsDir, state);
        Path dumps = reportsDir != null ? reportsDir : Path.of(System.getProperty("java.io.tmpdir"));
        Thread runner = Thread.currentThread(); // the platform runs the tests on the caller's thread
        Thread hook = new Thread(() -> dying(reporter, state, out, dumps, runner), "surefire-style-launcher-exit");
        Runtime.getRuntime().addShutdownHook(hook);
        try {
            Launcher launcher = LauncherFactory.create();
            launcher.execute(launcher.discover(discovery), reporter);
        } finally {
            Runtime.getRuntime().removeShutdownHook(hook);
        }
        SurefireFormat.Counts total = reporter.total();
        if (summary) {
            SurefireFormat.results(out, reporter.problems(), total, List.of());
        }
        if (state != null) {
            try {
                state.close();
            } catch (java.io.IOException ignored) {
                // the records are written already
            }
        }
        return total.failed() || total.run == 0 ? 1 : 0;
    }

    /**
     * The JVM exits before the tests finished (SIGTERM from a timeout, System.exit in a test): say where, down to the
     * frames the test thread was in, since the thread dump stays on the machine that ran it (a CI run shows the
     * message only).
     */
    private static void dying(SurefireReporter reporter, StateFile state, PrintStream out, Path dumps, Thread runner) {
        if (reporter.finished()) {
            return;
        }
        String running = reporter.runningClass().orElse("(no test class)");
        Path dump = dumps.resolve("threads-" + ProcessHandle.current().pid() + ".txt");
        try {
            StringBuilder sb = new StringBuilder();
            for (Map.Entry<Thread, StackTraceElement[]> e : Thread.getAllStackTraces().entrySet()) {
                sb.append('"').append(e.getKey().getName()).append("\" ").append(e.getKey().getState()).append('\n');
                for (StackTraceElement f : e.getValue()) {
                    sb.append("\tat ").append(f).append('\n');
                }
                sb.append('\n');
            }
            Files.createDirectories(dumps);
            Files.writeString(dump, sb);
        } catch (Exception e) {
            dump = null;
        }
        String why = "the JVM is exiting (a signal such as a timeout's SIGTERM, or System.exit) while " + running
                + " runs" + (dump != null ? "; thread dump in " + dump : "") + "; the test thread was at "
                + where(runner.getStackTrace());
        out.println("[ERROR] " + why);
        out.flush();
        if (state != null) {
            state.write("killed", running, why);
        }
    }

    /** Frames that say what a thread was doing at most in one line. */
    private static final int WHERE_FRAMES = 6;

    /**
     * A thread's stack in one line: the frame it is in, then the innermost frames of the code under test (not the
     * JDK's, JUnit's or this launcher's), innermost first, joined by " < ".
     */
    static String where(StackTraceElement[] stack) {
        if (stack.length == 0) {
            return "(no frames: the thread has ended)";
        }
        List<String> frames = new ArrayList<>();
        frames.add(frame(stack[0]));
        for (int i = 1; i < stack.length && frames.size() < WHERE_FRAMES; i++) {
            String c = stack[i].getClassName();
            if (!(c.startsWith("java.") || c.startsWith("jdk.") || c.startsWith("sun.") || c.startsWith("org.junit.")
                    || c.equals(SurefireStyleLauncher.class.getName()))) {
                frames.add(frame(stack[i]));
            }
        }
        return String.join(" < ", frames);
    }

    private static String frame(StackTraceElement f) {
        String c = f.getClassName();
        return c.substring(c.lastIndexOf('.') + 1) + "." + f.getMethodName()
                + (f.getLineNumber() > 0 ? ":" + f.getLineNumber() : "");
    }

    private static String value(String[] args, int i, String option) {
        if (i >= args.length) {
            throw new IllegalArgumentException(option + " needs a value");
        }
        return args[i];
    }
}
