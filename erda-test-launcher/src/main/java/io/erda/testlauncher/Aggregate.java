package io.erda.testlauncher;

import io.erda.testlauncher.SurefireFormat.Counts;
import io.erda.testlauncher.SurefireFormat.Problem;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/**
 * The Results section and total line of several launcher runs, read back from their state files ({@link StateFile}).
 * Each run's per-class lines were printed as it ran; what only this can print is a run whose JVM died: the class it
 * was running gets its class line here, with the test that was running counted as an error that names the exit
 * status, and a run that left no state at all (its JVM never started, or the VM stopped before it) is one error.
 */
final class Aggregate {
    private Aggregate() {
    }

    static int run(List<Path> stateFiles, PrintStream out) throws IllegalArgumentException {
        if (stateFiles.isEmpty()) {
            throw new IllegalArgumentException("--aggregate needs state files");
        }
        Counts total = new Counts();
        List<Problem> problems = new ArrayList<>();
        for (Path file : stateFiles) {
            read(file, total, problems, out);
        }
        SurefireFormat.results(out, problems, total, List.of());
        return total.failed() || total.run == 0 ? 1 : 0;
    }

    private static void read(Path file, Counts total, List<Problem> problems, PrintStream out) {
        String label = file.getFileName().toString().replaceFirst("\\.state$", "");
        List<String[]> records;
        try {
            records = Files.exists(file) ? StateFile.read(file) : List.of();
        } catch (IOException e) {
            records = List.of();
        }
        String exit = null;
        String killed = null;
        boolean start = false;
        boolean end = false;
        String running = null;
        String runningTest = null;
        Counts partial = new Counts();
        Counts run = new Counts();
        for (String[] r : records) {
            switch (r[0]) {
                case "start" -> start = true;
                case "running" -> {
                    running = r[1];
                    runningTest = null;
                    partial = new Counts();
                }
                case "test" -> runningTest = r[2];
                case "outcome" -> {
                    long n = r.length > 3 ? Long.parseLong(r[3]) : 1;
                    partial.run += n;
                    switch (r[2]) {
                        case "S" -> partial.skipped += n;
                        case "F" -> partial.failures += n;
                        case "E" -> partial.errors += n;
                        default -> { }
                    }
                    runningTest = null;
                }
                case "problem" -> problems.add(new Problem(r[1].charAt(0), r[2]));
                case "class" -> {
                    Counts c = new Counts();
                    c.run = Long.parseLong(r[2]);
                    c.failures = Long.parseLong(r[3]);
                    c.errors = Long.parseLong(r[4]);
                    c.skipped = Long.parseLong(r[5]);
                    run.add(c);
                    running = null;
                }
                case "end" -> end = true;
                case "killed" -> killed = r[2];
                case "exit" -> exit = r[1];
                default -> { }
            }
        }
        String status = exit == null ? "an unknown status" : "status " + exit + meaning(exit);
        if (!start) {
            Counts c = new Counts();
            c.run = 1;
            c.errors = 1;
            out.println(SurefireFormat.classLine(c, 0, label));
            String why = records.isEmpty() && !Files.exists(file)
                    ? "did not run (no state file " + file + ": the VM stopped before it, or its command failed)"
                    : "its JVM exited with " + status + " before any test ran (see the lines above)";
            out.println("[ERROR] " + label + " -- Time elapsed: 0 s <<< ERROR!");
            out.println(why);
            out.println();
            problems.add(new Problem('E', label + " » " + why));
            run.add(c);
        } else if (!end) {
            String what = "the JVM exited with " + status + (killed != null ? " (" + killed + ")" : "");
            if (running != null) {
                partial.run++;
                partial.errors++;
                String test = runningTest != null ? runningTest : running;
                out.println(SurefireFormat.classLine(partial, 0, running));
                out.println("[ERROR] " + test + " -- Time elapsed: 0 s <<< ERROR!");
                out.println("JvmExit: " + what + " while this ran; any hs_err file and the output are beside " + file);
                out.println();
                problems.add(new Problem('E', SurefireFormat.simpleName(running)
                        + (runningTest != null ? runningTest.substring(running.length()) : "") + " » JvmExit " + what));
                run.add(partial);
            } else {
                Counts c = new Counts();
                c.run = 1;
                c.errors = 1;
                out.println(SurefireFormat.classLine(c, 0, label));
                problems.add(new Problem('E', label + " » JvmExit " + what + " between test classes"));
                run.add(c);
            }
        } else if (exit != null && !exit.equals("0") && !exit.equals("1")) {
            Counts c = new Counts();
            c.run = 1;
            c.errors = 1;
            problems.add(new Problem('E', label + " » JvmExit the JVM exited with " + status + " after its tests"));
            run.add(c);
        }
        if (start && run.run == 0) {
            problems.add(new Problem('E', label + " » No tests were executed"));
            run.errors++;
            run.run++;
        }
        total.add(run);
    }

    private static String meaning(String exit) {
        return switch (exit) {
            case "124" -> " (killed by the group's timeout)";
            case "134" -> " (SIGABRT: the JVM crashed, e.g. SIGSEGV in native code)";
            case "137" -> " (SIGKILL)";
            case "139" -> " (SIGSEGV)";
            case "143" -> " (SIGTERM)";
            default -> "";
        };
    }
}
