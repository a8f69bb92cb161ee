package io.erda.bench.compare;

import io.erda.bench.backend.ServerProcess;
import io.erda.bench.ycsb.ErdaYcsbDb;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.io.PrintWriter;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * One YCSB client run ({@code site.ycsb.Client -load} or {@code -t}) as a JVM of its own, since YCSB ends with
 * System.exit. Its stdout (the measurements) and stderr (status every two seconds, errors) are saved as
 * {@code NAME.out} and {@code NAME.err}; status lines are forwarded as progress while it runs.
 */
final class YcsbProcess {

    /** "2026-11-21 22:37:51:008 10 sec: 17684 operations; 1234.5 current ops/sec; [READ: ...]". */
    private static final Pattern STATUS = Pattern.compile("\\d+ sec: \\d+ operations;[^\\[]*");

    /** A YCSB run that did not give usable measurements, with why. */
    static final class FailedRun extends IOException {
        FailedRun(String message) {
            super(message);
        }
    }

    private YcsbProcess() {
    }

    /**
     * Runs YCSB and returns its parsed output; throws {@link FailedRun} naming the reason if it exits badly, times
     * out, reports failed operations, prints an exception, or completes fewer than {@code minOk} operations.
     */
    static YcsbOutput run(String label, boolean load, Path workload, Map<String, String> properties, int threads,
                          Duration timeout, long minOk, Path rawDir, PrintStream progress) throws IOException {
        return run(label, load, workload, properties, threads, timeout, minOk, rawDir, progress, () -> { }, () -> { });
    }

    /**
     * As above; {@code allConnected} runs when every YCSB thread has connected, {@code firstClosing} when the first
     * is about to disconnect (both on the thread reading YCSB's stderr, at most once each).
     */
    static YcsbOutput run(String label, boolean load, Path workload, Map<String, String> properties, int threads,
                          Duration timeout, long minOk, Path rawDir, PrintStream progress, Runnable allConnected,
                          Runnable firstClosing) throws IOException {
        List<String> command = new ArrayList<>(List.of(ServerProcess.javaExecutable(), "--enable-native-access=ALL-UNNAMED",
            "-Djava.awt.headless=true", "-cp", System.getProperty("java.class.path"), "site.ycsb.Client",
            load ? "-load" : "-t", "-db", "io.erda.bench.ycsb.ErdaYcsbDb", "-P", workload.toString(),
            "-threads", Integer.toString(threads), "-s", "-p", "status.interval=2"));
        properties.forEach((k, v) -> command.addAll(List.of("-p", k + "=" + v)));
        Files.createDirectories(rawDir);
        Path out = rawDir.resolve(label + ".out");
        Path err = rawDir.resolve(label + ".err");
        Process p = new ProcessBuilder(command).redirectOutput(out.toFile()).start();
        List<String> errors = new ArrayList<>();
        Thread pump = Thread.ofPlatform().daemon().name("ycsb-" + label).start(() -> {
            try (BufferedReader in = new BufferedReader(new InputStreamReader(p.getErrorStream(), StandardCharsets.UTF_8));
                 PrintWriter saved = new PrintWriter(Files.newBufferedWriter(err, StandardCharsets.UTF_8), true)) {
                int connected = 0;
                boolean closing = false;
                for (String line; (line = in.readLine()) != null; ) {
                    saved.println(line);
                    Matcher m = STATUS.matcher(line);
                    if (line.equals(ErdaYcsbDb.CONNECTED)) {
                        if (++connected == threads) {
                            allConnected.run();
                        }
                    } else if (line.equals(ErdaYcsbDb.CLOSING)) {
                        if (!closing) {
                            closing = true;
                            firstClosing.run();
                        }
                    } else if (m.find()) {
                        progress.println("  " + label + ": " + m.group().replaceAll("; est completion in .*", "").strip().replaceAll(";$", ""));
                    } else if (line.startsWith("erda-ycsb:") || line.contains("Exception") || line.startsWith("Error")) {
                        synchronized (errors) {
                            errors.add(line);
                        }
                        progress.println("  " + label + ": " + line);
                    }
                }
            } catch (IOException ignored) {
                // The process went away; its exit status tells the rest.
            }
        });
        try {
            if (!p.waitFor(timeout.toMillis(), TimeUnit.MILLISECONDS)) {
                p.destroyForcibly().waitFor(10, TimeUnit.SECONDS);
                throw new FailedRun("YCSB " + label + " did not finish within " + timeout.toSeconds() + " s (see " + err + ")");
            }
            pump.join(5000);
        } catch (InterruptedException e) {
            p.destroyForcibly();
            Thread.currentThread().interrupt();
            throw new FailedRun("interrupted while YCSB " + label + " ran");
        }
        String stdout = Files.readString(out, StandardCharsets.UTF_8);
        YcsbOutput parsed = YcsbOutput.parse(stdout);
        List<String> why = new ArrayList<>();
        if (p.exitValue() != 0) {
            why.add("exit status " + p.exitValue());
        }
        synchronized (errors) {
            why.addAll(errors.stream().limit(3).toList());
        }
        why.addAll(parsed.failures());
        if (why.isEmpty() && parsed.okOperations() < minOk) {
            why.add(parsed.okOperations() + " operations completed, expected at least " + minOk);
        }
        if (!why.isEmpty()) {
            throw new FailedRun("YCSB " + label + " failed: " + String.join("; ", why) + " (raw output: " + out + ", " + err + ")");
        }
        return parsed;
    }
}
