package io.erda.testlauncher;

import java.io.PrintStream;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.LinkedHashSet;
import java.util.Locale;
import java.util.Set;

/**
 * The lines Maven Surefire (3.5) prints, so a run of this launcher reads like {@code ./mvnw verify}: per class
 * {@code [INFO] Tests run: 3, Failures: 0, Errors: 0, Skipped: 0, Time elapsed: 0.123 s -- in io.erda.Foo} (or the
 * {@code [ERROR] ... <<< FAILURE! -- in ...} form followed by each failed test and its trace), then the
 * {@code Results:} section listing failures and errors one per line and the total line. As in Surefire an
 * {@link AssertionError} is a failure and any other throwable an error; skipped tests count as run.
 */
final class SurefireFormat {
    static final String RULE = "-------------------------------------------------------";
    /** Lines of an exception message printed under a failed test (a server log can be long). */
    private static final int MESSAGE_LINES = 25;
    /** Length of the message in a Results line (Surefire prints it whole; one line per test reads better). */
    private static final int SUMMARY_CHARS = 300;

    private SurefireFormat() {
    }

    /** One failed test or container: 'F' (failure) or 'E' (error), and its line in the Results section. */
    record Problem(char kind, String summary) {
        boolean failure() {
            return kind == 'F';
        }
    }

    /** Counts of a class, a run, or several runs. */
    static final class Counts {
        long run;
        long failures;
        long errors;
        long skipped;

        void add(Counts c) {
            run += c.run;
            failures += c.failures;
            errors += c.errors;
            skipped += c.skipped;
        }

        boolean failed() {
            return failures + errors > 0;
        }

        String line() {
            return "Tests run: " + run + ", Failures: " + failures + ", Errors: " + errors + ", Skipped: " + skipped;
        }
    }

    static void header(PrintStream out) {
        out.println("[INFO] " + RULE);
        out.println("[INFO]  T E S T S");
        out.println("[INFO] " + RULE);
    }

    static void running(PrintStream out, String className) {
        out.println("[INFO] Running " + className);
    }

    /** The per-class line. */
    static String classLine(Counts c, long nanos, String className) {
        String level = c.failed() ? "[ERROR] " : c.skipped > 0 ? "[WARNING] " : "[INFO] ";
        return level + c.line() + ", Time elapsed: " + seconds(nanos) + " s" + (c.failed() ? " <<< FAILURE!" : "")
                + " -- in " + className;
    }

    /** The line naming a failed test under its class line; its trace follows. */
    static String testLine(String testName, long nanos, boolean failure) {
        return "[ERROR] " + testName + " -- Time elapsed: " + seconds(nanos) + " s <<< " + (failure ? "FAILURE!" : "ERROR!");
    }

    /** Seconds as Surefire prints them: "0" for nothing measured, else three decimals. */
    static String seconds(long nanos) {
        long millis = nanos / 1_000_000;
        return millis == 0 ? "0" : String.format(Locale.ROOT, "%.3f", millis / 1000.0);
    }

    static boolean isFailure(Throwable t) {
        return t instanceof AssertionError;
    }

    /**
     * The throwable as Surefire prints it under a failed test: its class and message, the frames down to the
     * test class's last one, then each cause the same way. Long messages keep their first lines.
     */
    static String trace(Throwable t, Set<String> testClass) {
        StringBuilder sb = new StringBuilder();
        appendTrace(sb, t, testClass, false, 0);
        return sb.toString();
    }

    private static void appendTrace(StringBuilder sb, Throwable t, Set<String> testClass, boolean cause, int depth) {
        String message = t.getMessage();
        sb.append(cause ? "Caused by: " : "").append(t.getClass().getName());
        if (message != null) {
            sb.append(": ").append(message.contains("\n") ? "\n" : "").append(firstLines(message, cause ? 10 : MESSAGE_LINES));
        }
        sb.append('\n');
        StackTraceElement[] frames = t.getStackTrace();
        int last = -1;
        for (int i = 0; i < frames.length; i++) {
            if (inClass(frames[i], testClass)) {
                last = i;
                if (cause) {
                    break;
                }
            }
        }
        int shown = last >= 0 ? last + 1 : Math.min(frames.length, 10);
        for (int i = 0; i < shown; i++) {
            sb.append("\tat ").append(frames[i]).append('\n');
        }
        if (shown < frames.length && (cause || last < 0)) {
            sb.append("\t... ").append(frames.length - shown).append(" more\n");
        }
        if (t.getCause() != null && t.getCause() != t && depth < 5) {
            appendTrace(sb, t.getCause(), testClass, true, depth + 1);
        }
    }

    private static String firstLines(String message, int max) {
        String[] lines = message.split("\n", -1);
        if (lines.length <= max) {
            return message;
        }
        return String.join("\n", java.util.Arrays.copyOf(lines, max)) + "\n    ... (" + (lines.length - max) + " more lines)";
    }

    /** A frame of the test class: the class itself, a superclass the test method may be inherited from, or a nested class. */
    private static boolean inClass(StackTraceElement f, Set<String> testClass) {
        String name = f.getClassName();
        for (String c : testClass) {
            if (name.equals(c) || name.startsWith(c + "$")) {
                return true;
            }
        }
        return false;
    }

    /** The class and its superclasses (an inherited test method's frames are in the superclass), when loadable. */
    static Set<String> withSuperclasses(String className) {
        Set<String> names = new LinkedHashSet<>();
        names.add(className);
        try {
            Class<?> c = Class.forName(className, false, Thread.currentThread().getContextClassLoader());
            for (c = c.getSuperclass(); c != null && c != Object.class; c = c.getSuperclass()) {
                names.add(c.getName());
            }
        } catch (ClassNotFoundException | LinkageError e) {
            // the name alone
        }
        return names;
    }

    /**
     * A failure's line in the Results section, as Surefire builds it: the test class's simple name, its frames from
     * the outermost ({@code Test.method:41->helper:30}), or {@code Test.method »} when none is in the trace, then for
     * an error the exception's simple name without "Exception", then the message (here on one line).
     */
    static String summary(String testClass, String methodName, Throwable t) {
        Set<String> classes = withSuperclasses(testClass);
        List<String> frames = new ArrayList<>();
        for (StackTraceElement f : t.getStackTrace()) {
            if (inClass(f, classes)) {
                frames.addFirst(f.getMethodName() + (f.getLineNumber() > 0 ? ":" + f.getLineNumber() : ""));
            }
        }
        String where = simpleName(testClass) + "." + (frames.isEmpty() ? methodName + " »" : String.join("->", frames));
        String what = isFailure(t) ? "" : shortName(t);
        String message = oneLine(t.getMessage());
        return (where + " " + what + (what.isEmpty() || message.isEmpty() ? "" : " ") + message).strip();
    }

    static String oneLine(String message) {
        if (message == null) {
            return "";
        }
        String line = message.strip().replaceAll("\\s*\\R\\s*", " ");
        return line.length() <= SUMMARY_CHARS ? line : line.substring(0, SUMMARY_CHARS) + " ...";
    }

    private static String shortName(Throwable t) {
        String name = t.getClass().getSimpleName();
        return name.endsWith("Exception") && name.length() > "Exception".length()
                ? name.substring(0, name.length() - "Exception".length()) : name;
    }

    static String simpleName(String className) {
        return className.substring(className.lastIndexOf('.') + 1);
    }

    /** The Results section and the total line; failures and errors each sorted, as Surefire lists them. */
    static void results(PrintStream out, List<Problem> problems, Counts total, List<String> notes) {
        out.println("[INFO] ");
        out.println("[INFO] Results:");
        out.println("[INFO] ");
        List<String> failures = problems.stream().filter(Problem::failure).map(Problem::summary)
                .sorted(Comparator.naturalOrder()).toList();
        List<String> errors = problems.stream().filter(p -> !p.failure()).map(Problem::summary)
                .sorted(Comparator.naturalOrder()).toList();
        if (!failures.isEmpty()) {
            out.println("[ERROR] Failures: ");
            failures.forEach(f -> out.println("[ERROR]   " + f));
        }
        if (!errors.isEmpty()) {
            out.println("[ERROR] Errors: ");
            errors.forEach(e -> out.println("[ERROR]   " + e));
        }
        notes.forEach(n -> out.println("[ERROR] " + n));
        if (total.run == 0) {
            out.println("[ERROR] No tests were executed!");
        }
        out.println("[INFO] ");
        String level = total.failed() || total.run == 0 ? "[ERROR] " : total.skipped > 0 ? "[WARNING] " : "[INFO] ";
        out.println(level + total.line());
        out.flush();
    }
}
