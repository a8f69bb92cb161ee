package io.erda.bench.compare;

import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;
import java.util.function.Function;
import org.knowm.xchart.BitmapEncoder;
import org.knowm.xchart.CategoryChart;
import org.knowm.xchart.CategoryChartBuilder;
import org.knowm.xchart.XYChart;
import org.knowm.xchart.XYChartBuilder;
import org.knowm.xchart.internal.chartpart.Chart;
import org.knowm.xchart.style.Styler;

/**
 * The report's PNG plots (XChart, headless): per workload and protocol at the base setting (the run's value size,
 * thread count and client processes) throughput, mean latency, NVM bytes per operation and server CPU per operation;
 * with more than one value size, mean latency and server CPU per operation against value size per workload (paper
 * Figs. 14–17), and for update-only the server-side PUT throughput (RDMP-KV's Fig. 7); with more than
 * one thread count, throughput against threads per workload (Figs. 18–21); with more than one process count,
 * throughput against client processes. Titles carry the units; tick labels read {@code 550k}, not {@code 5.5E5}
 * ({@link AxisLabels}).
 */
final class ReportPlots {

    private static final int WIDTH = 900;
    private static final int HEIGHT = 540;

    private ReportPlots() {
    }

    /** Writes the plots into {@code dir}; returns their files. */
    static List<Path> write(List<RunRecord> runs, int baseValueSize, int baseThreads, int baseClients, Path dir) throws IOException {
        System.setProperty("java.awt.headless", "true");
        List<Path> files = new ArrayList<>();
        List<RunRecord> base = runs.stream().filter(r -> r.valueSize() == baseValueSize && r.threads() == baseThreads
            && r.clients() == baseClients).toList();
        String setting = " (" + setting(baseValueSize, baseThreads, baseClients) + ")";
        files.add(bars(base, "Throughput, ops/s" + setting, "ops/s", RunRecord::throughputOps, dir.resolve("throughput.png")));
        files.add(bars(base, "Mean latency per workload, µs" + setting, "µs", RunRecord::meanUs, dir.resolve("latency-per-workload.png")));
        files.add(bars(base, "NVM bytes written per operation, B" + setting, "bytes", RunRecord::nvmBytesPerOp, dir.resolve("nvm-bytes-per-op.png")));
        files.add(bars(base, "Server CPU per operation, µs" + setting, "µs", RunRecord::serverCpuUsPerOp, dir.resolve("server-cpu-per-op.png")));
        if (distinct(runs, RunRecord::valueSize).size() > 1) {
            for (String w : distinct(runs, RunRecord::workload)) {
                List<RunRecord> sweep = runs.stream().filter(r -> r.workload().equals(w) && r.threads() == baseThreads
                    && r.clients() == baseClients).toList();
                files.add(lines(sweep, "Mean latency of " + w + " against value size, µs (" + setting(0, baseThreads, baseClients) + ")",
                    "value size (B)", "µs", RunRecord::valueSize, RunRecord::meanUs, true,
                    dir.resolve("latency-vs-value-size-" + w + ".png")));
                files.add(lines(sweep, "Server CPU per operation of " + w + " against value size, µs ("
                    + setting(0, baseThreads, baseClients) + ")", "value size (B)", "µs", RunRecord::valueSize,
                    RunRecord::serverCpuUsPerOp, true, dir.resolve("server-cpu-vs-value-size-" + w + ".png")));
                if (w.equals("update-only")) {
                    // RDMP-KV's Fig. 7: the PUT throughput a server core allows
                    files.add(lines(sweep, "Server PUT throughput against value size, PUTs per server core-second ("
                        + setting(0, baseThreads, baseClients) + ")", "value size (B)", "PUT/s", RunRecord::valueSize,
                        r -> r.serverCpuUsPerOp() == null || r.serverCpuUsPerOp() <= 0 ? null : 1e6 / r.serverCpuUsPerOp(),
                        true, dir.resolve("server-put-throughput-vs-value-size.png")));
                }
            }
        }
        List<RunRecord> threadSweep = runs.stream().filter(r -> r.valueSize() == baseValueSize && r.clients() == baseClients).toList();
        if (distinct(threadSweep, RunRecord::threads).size() > 1) {
            for (String w : distinct(threadSweep, RunRecord::workload)) {
                List<RunRecord> sweep = threadSweep.stream().filter(r -> r.workload().equals(w)).toList();
                files.add(lines(sweep, "Throughput of " + w + " against threads, ops/s (" + setting(baseValueSize, 0, baseClients) + ")",
                    "threads per client process", "ops/s", RunRecord::threads, RunRecord::throughputOps, false,
                    dir.resolve("throughput-vs-threads-" + w + ".png")));
            }
        }
        List<RunRecord> processSweep = runs.stream().filter(r -> r.valueSize() == baseValueSize && r.threads() == baseThreads).toList();
        if (distinct(processSweep, RunRecord::clients).size() > 1) {
            for (String w : distinct(processSweep, RunRecord::workload)) {
                List<RunRecord> sweep = processSweep.stream().filter(r -> r.workload().equals(w)).toList();
                files.add(lines(sweep, "Throughput of " + w + " against client processes, ops/s (" + setting(baseValueSize, baseThreads, 0) + ")",
                    "client processes", "ops/s", RunRecord::clients, RunRecord::throughputOps, false,
                    dir.resolve("throughput-vs-processes-" + w + ".png")));
            }
        }
        return files;
    }

    /** "1024 B values, 1 thread, 2 client processes"; a part that is 0 is left out, one process is not mentioned. */
    static String setting(int valueSize, int threads, int clients) {
        List<String> parts = new ArrayList<>();
        if (valueSize > 0) {
            parts.add(valueSize + " B values");
        }
        if (threads > 0) {
            parts.add(threads + " thread" + (threads == 1 ? "" : "s") + (clients > 1 ? " each" : ""));
        }
        if (clients > 1) {
            parts.add(clients + " client processes");
        }
        return String.join(", ", parts);
    }

    private static Path bars(List<RunRecord> runs, String title, String yTitle, Function<RunRecord, Double> figure, Path file)
        throws IOException {
        CategoryChart chart = new CategoryChartBuilder().width(WIDTH).height(HEIGHT).title(title)
            .xAxisTitle("workload").yAxisTitle(yTitle).build();
        chart.getStyler().setLegendPosition(Styler.LegendPosition.OutsideS).setLegendLayout(Styler.LegendLayout.Horizontal);
        chart.setCustomYAxisTickLabelsFormatter(AxisLabels::si);
        List<String> workloads = new ArrayList<>(distinct(runs, RunRecord::workload));
        for (String protocol : distinct(runs, RunRecord::protocol)) {
            List<Double> ys = new ArrayList<>();
            for (String w : workloads) {
                ys.add(runs.stream().filter(r -> r.protocol().equals(protocol) && r.workload().equals(w))
                    .map(figure).filter(v -> v != null).findFirst().orElse(null));
            }
            chart.addSeries(PeerSystems.label(protocol), workloads, ys);
        }
        return save(chart, file);
    }

    private static Path lines(List<RunRecord> runs, String title, String xTitle, String yTitle, Function<RunRecord, Integer> x,
                              Function<RunRecord, Double> y, boolean logX, Path file) throws IOException {
        XYChart chart = new XYChartBuilder().width(WIDTH).height(HEIGHT).title(title).xAxisTitle(xTitle).yAxisTitle(yTitle).build();
        chart.getStyler().setXAxisLogarithmic(logX);
        chart.getStyler().setLegendPosition(Styler.LegendPosition.OutsideS).setLegendLayout(Styler.LegendLayout.Horizontal);
        if (!logX) {
            // XChart lays out a custom-labelled axis linearly: a log axis keeps its own labels (value sizes: 16 to 4096)
            chart.setCustomXAxisTickLabelsFormatter(AxisLabels::si);
        }
        chart.setCustomYAxisTickLabelsFormatter(AxisLabels::si);
        for (String protocol : distinct(runs, RunRecord::protocol)) {
            List<RunRecord> points = runs.stream().filter(r -> r.protocol().equals(protocol) && y.apply(r) != null)
                .sorted((a, b) -> Integer.compare(x.apply(a), x.apply(b))).toList();
            if (!points.isEmpty()) {
                chart.addSeries(PeerSystems.label(protocol), points.stream().map(p -> (double) x.apply(p)).toList(), points.stream().map(y).toList());
            }
        }
        return save(chart, file);
    }

    static Path save(Chart<?, ?> chart, Path file) throws IOException {
        BitmapEncoder.saveBitmap(chart, file.toString(), BitmapEncoder.BitmapFormat.PNG);
        return file;
    }

    static <T> Set<T> distinct(List<RunRecord> runs, Function<RunRecord, T> f) {
        Set<T> s = new LinkedHashSet<>();
        runs.forEach(r -> s.add(f.apply(r)));
        return s;
    }
}
