package io.erda.bench.cluster;

import java.io.IOException;
import java.net.URI;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;

/**
 * One run of the real YCSB client ({@code site.ycsb.Client}, this JVM's class path) as a process of its own (YCSB
 * ends with System.exit), through the binding {@code io.erda.bench.ycsb.ErdaYcsbDb} with {@code erda.uri} a
 * cluster's {@code zk://} URI. Its output goes to {@code DIR/LABEL.out} and {@code .err}; {@link #result} parses
 * YCSB's summary lines ({@code [OVERALL], Throughput(ops/sec), 1234.5}).
 */
final class YcsbRun {
    private final String label;
    private final Process process;
    private final Path out;

    private YcsbRun(String label, Process process, Path out) {
        this.label = label;
        this.process = process;
        this.out = out;
    }

    /** Starts YCSB: {@code load} inserts the records, else runs the workload's operations. */
    static YcsbRun start(String label, boolean load, Map<String, String> properties, int threads, Path dir)
            throws IOException {
        List<String> command = new ArrayList<>(List.of(ProcessHandle.current().info().command().orElse("java"),
                "--enable-native-access=ALL-UNNAMED", "-Xmx512m", "-cp", System.getProperty("java.class.path"),
                "site.ycsb.Client", load ? "-load" : "-t", "-db", "io.erda.bench.ycsb.ErdaYcsbDb",
                "-threads", String.valueOf(threads), "-s", "-p", "status.interval=5"));
        properties.forEach((k, v) -> command.addAll(List.of("-p", k + "=" + v)));
        Files.createDirectories(dir);
        Path out = dir.resolve(label + ".out");
        Process p = new ProcessBuilder(command).redirectOutput(out.toFile())
                .redirectError(dir.resolve(label + ".err").toFile()).start();
        return new YcsbRun(label, p, out);
    }

    /** Waits for YCSB and returns its summary ("[SECTION], metric" to value); fails naming its output otherwise. */
    Map<String, Double> result(long timeoutSeconds) throws IOException, InterruptedException {
        if (!process.waitFor(timeoutSeconds, TimeUnit.SECONDS)) {
            process.destroyForcibly().waitFor(10, TimeUnit.SECONDS);
            throw new IOException("YCSB " + label + " did not finish within " + timeoutSeconds + " s (" + out + ")");
        }
        if (process.exitValue() != 0) {
            throw new IOException("YCSB " + label + " exited " + process.exitValue() + " (" + out + ", .err beside it)");
        }
        Map<String, Double> summary = new TreeMap<>();
        for (String line : Files.readAllLines(out)) {
            String[] f = line.split(", ");
            if (f.length == 3 && f[0].startsWith("[")) {
                try {
                    summary.put(f[0] + ", " + f[1], Double.parseDouble(f[2]));
                } catch (NumberFormatException notANumber) {
                    // histogram buckets and the like
                }
            }
        }
        if (!summary.containsKey("[OVERALL], Throughput(ops/sec)")) {
            throw new IOException("YCSB " + label + " printed no throughput (" + out + ")");
        }
        return summary;
    }

    /** Operations YCSB counted as failed (any Return= other than OK), from a {@link #result}. */
    static long failed(Map<String, Double> summary) {
        return summary.entrySet().stream().filter(e -> e.getKey().contains("Return=") && !e.getKey().endsWith("Return=OK")
                && !e.getKey().startsWith("[CLEANUP]")).mapToLong(e -> e.getValue().longValue()).sum();
    }

    /** YCSB's core workload with {@code records} records of one 1 KiB field, as scripts/ycsb-compare runs it. */
    static Map<String, String> workload(URI zk, long records, double readProportion, long operations, long seconds) {
        Map<String, String> p = new TreeMap<>();
        p.put("workload", "site.ycsb.workloads.CoreWorkload");
        p.put("erda.uri", zk.toString());
        p.put("recordcount", String.valueOf(records));
        p.put("operationcount", String.valueOf(operations));
        p.put("readproportion", String.valueOf(readProportion));
        p.put("updateproportion", String.valueOf(1 - readProportion));
        p.put("requestdistribution", "zipfian");
        p.put("fieldcount", "1");
        p.put("fieldlength", "1024");
        p.put("readallfields", "true");
        p.put("writeallfields", "true");
        p.put("insertorder", "hashed");
        if (seconds > 0) {
            p.put("maxexecutiontime", String.valueOf(seconds));
        }
        return p;
    }
}
