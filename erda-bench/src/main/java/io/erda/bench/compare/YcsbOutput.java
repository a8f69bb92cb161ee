package io.erda.bench.compare;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The measurements a YCSB 0.17.0 run prints on stdout ({@code [SECTION], Metric, value} lines, text exporter),
 * e.g. {@code [OVERALL], Throughput(ops/sec), 56497.1} or {@code [READ], 99thPercentileLatency(us), 12}.
 * With YCSB's default measurement type (hdrhistogram) every operation section has AverageLatency(us) and
 * 99thPercentileLatency(us), and one {@code Return=CODE} count per result code.
 */
public final class YcsbOutput {

    /** The figures of one section ({@code OVERALL}, {@code READ}, {@code UPDATE}, {@code INSERT}, ...). */
    private final Map<String, Map<String, Double>> sections = new LinkedHashMap<>();
    /** The first exception YCSB printed (a binding's init failure is printed to stdout and the run goes on). */
    private String exception;

    private YcsbOutput() {
    }

    public static YcsbOutput parse(String stdout) {
        YcsbOutput out = new YcsbOutput();
        for (String line : stdout.split("\n")) {
            line = line.strip();
            if (!line.startsWith("[")) {
                if (out.exception == null && line.matches("^[\\w.$]+(Exception|Error)(: .*)?$")) {
                    out.exception = line;
                }
                continue;
            }
            String[] parts = line.split(",", 3);
            int close = parts[0].indexOf(']');
            if (parts.length != 3 || close < 0) {
                continue;
            }
            try {
                double value = Double.parseDouble(parts[2].strip());
                out.sections.computeIfAbsent(parts[0].substring(1, close), k -> new LinkedHashMap<>())
                    .put(parts[1].strip(), value);
            } catch (NumberFormatException notAFigure) {
                // Status lines and the like: not a measurement.
            }
        }
        return out;
    }

    /** A figure, or null if the run did not print it. */
    public Double figure(String section, String metric) {
        Map<String, Double> s = sections.get(section);
        return s == null ? null : s.get(metric);
    }

    public Double throughput() {
        return figure("OVERALL", "Throughput(ops/sec)");
    }

    public Double runtimeMillis() {
        return figure("OVERALL", "RunTime(ms)");
    }

    /**
     * The section of YCSB's data integrity check ({@code dataintegrity=true}): one {@code Return=} count per read checked,
     * {@code OK} where the value read was the one derived from its key, {@code UNEXPECTED_STATE} where it was not,
     * {@code ERROR} where the read returned no field. Not an operation of its own.
     */
    public static final String VERIFY = "VERIFY";

    /** Reads whose value YCSB's data integrity check found right; 0 without the check. */
    public long verified() {
        return ok(VERIFY);
    }

    /** Operations of one type (READ, UPDATE, INSERT) that returned OK; 0 if none. */
    public long ok(String operation) {
        Double n = figure(operation, "Return=OK");
        return n == null ? 0 : n.longValue();
    }

    public Double meanMicros(String operation) {
        return figure(operation, "AverageLatency(us)");
    }

    public Double p99Micros(String operation) {
        return figure(operation, "99thPercentileLatency(us)");
    }

    /** Operations that completed OK, over all operation types. */
    public long okOperations() {
        long n = 0;
        for (String section : sections.keySet()) {
            if (!section.equals("OVERALL") && !section.equals("CLEANUP") && !section.equals(VERIFY)
                    && !section.endsWith("-FAILED")) {
                n += ok(section);
            }
        }
        return n;
    }

    /**
     * What went wrong, empty if nothing: any result code other than OK ({@code [READ], Return=ERROR, 5};
     * NOT_FOUND is a failure too, since every key a workload reads was loaded), any {@code -FAILED} section, an
     * exception printed (YCSB prints a binding's init failure and carries on with the other threads), and no
     * throughput at all.
     */
    public List<String> failures() {
        List<String> failures = new ArrayList<>();
        if (exception != null) {
            failures.add(exception);
        }
        if (throughput() == null) {
            failures.add("no [OVERALL] Throughput(ops/sec) in the output");
        }
        sections.forEach((section, figures) -> {
            if (section.endsWith("-FAILED")) {
                failures.add(section + " operations: " + figures.getOrDefault("Operations", Double.NaN).longValue());
            }
            figures.forEach((metric, value) -> {
                if (metric.startsWith("Return=") && !metric.equals("Return=OK") && value > 0) {
                    failures.add(section + " " + metric + ": " + value.longValue());
                }
            });
        });
        return failures;
    }
}
