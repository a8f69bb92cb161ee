package io.erda.bench.store;

import java.io.IOException;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Optional;
import java.util.Set;
import java.util.function.ToDoubleFunction;
import org.knowm.xchart.BitmapEncoder;
import org.knowm.xchart.XYChart;
import org.knowm.xchart.XYChartBuilder;
import org.knowm.xchart.style.Styler;

/**
 * The value-size sweep of store-bench (RDMP-KV's Figs. 7 and 8): per fabric, protocol and value size, the server CPU
 * a PUT costs (the update phase: every key overwritten once), the server-side PUT throughput that CPU allows (PUTs
 * per server core-second, 10⁹ / CPU ns per PUT: the paper measures its server saturated, where throughput is that
 * figure times its cores), the end-to-end PUT and GET latency of the one client (mean: 1 / its closed-loop rate) and
 * the server CPU per GET. Then RDMP-KV's findings as ratios of this one run, each next to the paper's figure, and a
 * plot per fabric of server CPU per PUT and server PUT throughput against value size (log axes).
 */
final class ValueSizeSweep {
    private static final int WIDTH = 900;
    private static final int HEIGHT = 540;

    /** One protocol at one value size on one fabric. */
    record Point(String protocol, String fabric, int size, double putCpuNs, double putLatencyUs, double getCpuNs,
                 double getLatencyUs) {
        double serverPutsPerSecond() {
            return putCpuNs > 0 ? 1e9 / putCpuNs : Double.NaN;
        }
    }

    private ValueSizeSweep() {
    }

    static List<Point> points(List<StoreBench.Row> rows) {
        List<Point> points = new ArrayList<>();
        for (StoreBench.Row update : rows) {
            if (!update.op().equals("update")) {
                continue;
            }
            StoreBench.Row get = rows.stream().filter(r -> r.op().equals("get") && r.protocol().equals(update.protocol())
                    && r.fabric().equals(update.fabric()) && r.size() == update.size()).findFirst().orElseThrow();
            points.add(new Point(update.protocol(), update.fabric(), update.size(), update.serverCpuNsPerOp(),
                    1e6 / update.opsPerSecond(), get.serverCpuNsPerOp(), 1e6 / get.opsPerSecond()));
        }
        return points;
    }

    /** Prints the sweep and its ratios, and writes them with the plots into {@code dir}. */
    static void report(List<StoreBench.Row> rows, long saThreshold, Path dir, PrintStream out) throws IOException {
        List<Point> points = points(rows);
        StringBuilder md = new StringBuilder("# Value-size sweep (store-bench)\n\n");
        md.append("Server PUT throughput: PUTs per server core-second, 10^9 / server CPU ns per PUT (update phase). ")
                .append("Latencies: one client, closed loop, mean = 1 / rate. RDMP-SA threshold: ").append(saThreshold)
                .append(" B (shorter values go the HERD way).\n\n");
        md.append("| fabric | protocol | value B | server CPU µs/PUT | server PUT/s per core | PUT µs | server CPU µs/GET | GET µs |\n");
        md.append("|---|---|---|---|---|---|---|---|\n");
        for (Point p : points) {
            md.append(String.format(Locale.ROOT, "| %s | %s | %d | %.2f | %.0f | %.1f | %.2f | %.1f |%n", p.fabric(),
                    p.protocol(), p.size(), p.putCpuNs() / 1000, p.serverPutsPerSecond(), p.putLatencyUs(),
                    p.getCpuNs() / 1000, p.getLatencyUs()));
        }
        md.append("\n").append(findings(points, saThreshold));
        Files.createDirectories(dir);
        List<Path> plots = new ArrayList<>();
        for (String fabric : distinct(points, Point::fabric)) {
            List<Point> ofFabric = points.stream().filter(p -> p.fabric().equals(fabric)).toList();
            if (distinct(ofFabric, Point::size).size() > 1) {
                plots.add(plot(ofFabric, "Server CPU per PUT against value size, µs (" + fabric + ")", "µs",
                        p -> p.putCpuNs() / 1000, dir.resolve("put-cpu-vs-value-size-" + fabric + ".png")));
                plots.add(plot(ofFabric, "Server PUT throughput against value size, PUTs per core-second (" + fabric
                        + ")", "PUT/s", Point::serverPutsPerSecond, dir.resolve("put-throughput-vs-value-size-" + fabric
                        + ".png")));
            }
        }
        Path file = Files.writeString(dir.resolve("results.md"), md.toString(), StandardCharsets.UTF_8);
        out.println();
        out.print(md);
        out.println();
        out.println("report: " + file);
        plots.forEach(p -> out.println("  " + p));
    }

    /** The rows RDMP-KV's findings compare. */
    static final List<String> RDMP_PROTOCOLS = List.of("herd", "rdmp-sa", "rdmp-cc");

    /**
     * RDMP-KV's findings (its §IV) as ratios of this run, per fabric, each beside the paper's figure; a finding whose
     * protocols or sizes the run lacks says so; a run with none of RDMP-KV's protocols gets one line saying that.
     */
    static String findings(List<Point> points, long saThreshold) {
        if (points.stream().noneMatch(p -> RDMP_PROTOCOLS.contains(p.protocol()))) {
            // a sweep of Erda's own rows (erda against erda-one-sided, say): thirty rows of "not in this run" say nothing
            return "RDMP-KV's findings: none, as the run has none of " + String.join(", ", RDMP_PROTOCOLS)
                    + " (--protocols).\n";
        }
        StringBuilder b = new StringBuilder("## RDMP-KV's findings as ratios of this run\n\n");
        b.append("| fabric | finding | this run | paper |\n|---|---|---|---|\n");
        for (String fabric : distinct(points, Point::fabric)) {
            List<Point> f = points.stream().filter(p -> p.fabric().equals(fabric)).toList();
            int smallest = f.stream().mapToInt(Point::size).min().orElse(0);
            int largest = f.stream().mapToInt(Point::size).max().orElse(0);
            row(b, fabric, "RDMP-CC server PUT throughput, " + largest + " B vs " + smallest + " B (flat: ≈1)",
                    ratio(f, "rdmp-cc", largest, "rdmp-cc", smallest, Point::serverPutsPerSecond), "≈1 (flat, ~185 KPut/s)");
            row(b, fabric, "HERD server PUT throughput, " + largest + " B vs " + smallest + " B (falls)",
                    ratio(f, "herd", largest, "herd", smallest, Point::serverPutsPerSecond), "falls with size");
            row(b, fabric, "RDMP-CC vs HERD server PUT throughput at " + largest + " B",
                    ratio(f, "rdmp-cc", largest, "herd", largest, Point::serverPutsPerSecond), "22× at 256 KB");
            row(b, fabric, "RDMP-SA vs HERD server PUT throughput at 65536 B",
                    ratio(f, "rdmp-sa", 65536, "herd", 65536, Point::serverPutsPerSecond), "1.6× at 64 KB");
            row(b, fabric, "RDMP-SA vs HERD PUT latency, below " + saThreshold + " B (mean of ratios)",
                    meanRatio(f, "rdmp-sa", "herd", s -> s < saThreshold, Point::putLatencyUs), "≈1");
            row(b, fabric, "RDMP-CC vs HERD PUT latency, below " + saThreshold + " B",
                    meanRatio(f, "rdmp-cc", "herd", s -> s < saThreshold, Point::putLatencyUs), "1.08–1.24 (8–24% slower)");
            row(b, fabric, "RDMP-SA vs HERD PUT latency, from " + saThreshold + " B",
                    meanRatio(f, "rdmp-sa", "herd", s -> s >= saThreshold, Point::putLatencyUs), "0.45 (−55%)");
            row(b, fabric, "RDMP-CC vs HERD PUT latency, from " + saThreshold + " B",
                    meanRatio(f, "rdmp-cc", "herd", s -> s >= saThreshold, Point::putLatencyUs), "0.21 (−79%)");
            row(b, fabric, "RDMP-CC vs HERD GET latency, below " + saThreshold + " B",
                    meanRatio(f, "rdmp-cc", "herd", s -> s < saThreshold, Point::getLatencyUs), "≈1");
            row(b, fabric, "RDMP-CC vs HERD GET latency, from " + saThreshold + " B",
                    meanRatio(f, "rdmp-cc", "herd", s -> s >= saThreshold, Point::getLatencyUs), "0.43 (−57%)");
            row(b, fabric, "Erda vs RDMP-CC server CPU per GET (mean of ratios)",
                    meanRatio(f, "erda", "rdmp-cc", s -> true, Point::getCpuNs), "Erda: no server CPU; RDMP: a lookup RPC");
            row(b, fabric, "Erda vs RDMP-CC server CPU per PUT (mean of ratios)",
                    meanRatio(f, "erda", "rdmp-cc", s -> true, Point::putCpuNs), "Erda: no flag pass");
            row(b, fabric, "Erda vs HERD server CPU per PUT at " + largest + " B",
                    ratio(f, "erda", largest, "herd", largest, Point::putCpuNs), "-");
        }
        return b.toString();
    }

    private static void row(StringBuilder b, String fabric, String finding, Optional<Double> value, String paper) {
        b.append("| ").append(fabric).append(" | ").append(finding).append(" | ")
                .append(value.map(v -> String.format(Locale.ROOT, "%.2f", v)).orElse("not in this run")).append(" | ")
                .append(paper).append(" |\n");
    }

    private static Optional<Point> point(List<Point> points, String protocol, int size) {
        return points.stream().filter(p -> p.protocol().equals(protocol) && p.size() == size).findFirst();
    }

    private static Optional<Double> ratio(List<Point> points, String a, int sizeA, String b, int sizeB,
                                          ToDoubleFunction<Point> figure) {
        Optional<Point> x = point(points, a, sizeA);
        Optional<Point> y = point(points, b, sizeB);
        if (x.isEmpty() || y.isEmpty() || figure.applyAsDouble(y.get()) == 0) {
            return Optional.empty();
        }
        return Optional.of(figure.applyAsDouble(x.get()) / figure.applyAsDouble(y.get()));
    }

    /** The mean over the sizes {@code which} accepts (and both protocols ran) of a's figure over b's. */
    private static Optional<Double> meanRatio(List<Point> points, String a, String b, java.util.function.IntPredicate which,
                                              ToDoubleFunction<Point> figure) {
        List<Double> ratios = new ArrayList<>();
        for (int size : distinct(points, Point::size)) {
            if (which.test(size)) {
                ratio(points, a, size, b, size, figure).ifPresent(ratios::add);
            }
        }
        return ratios.isEmpty() ? Optional.empty()
                : Optional.of(ratios.stream().mapToDouble(Double::doubleValue).average().orElseThrow());
    }

    private static Path plot(List<Point> points, String title, String yTitle, ToDoubleFunction<Point> y, Path file)
            throws IOException {
        System.setProperty("java.awt.headless", "true");
        XYChart chart = new XYChartBuilder().width(WIDTH).height(HEIGHT).title(title).xAxisTitle("value size (B)")
                .yAxisTitle(yTitle).build();
        chart.getStyler().setXAxisLogarithmic(true).setYAxisLogarithmic(true);
        chart.getStyler().setLegendPosition(Styler.LegendPosition.OutsideS).setLegendLayout(Styler.LegendLayout.Horizontal);
        for (String protocol : distinct(points, Point::protocol)) {
            List<Point> series = points.stream().filter(p -> p.protocol().equals(protocol)
                    && y.applyAsDouble(p) > 0).sorted((a, b) -> Integer.compare(a.size(), b.size())).toList();
            if (!series.isEmpty()) {
                chart.addSeries(protocol, series.stream().map(p -> (double) p.size()).toList(),
                        series.stream().map(y::applyAsDouble).toList());
            }
        }
        BitmapEncoder.saveBitmap(chart, file.toString(), BitmapEncoder.BitmapFormat.PNG);
        return file;
    }

    private static <T> Set<T> distinct(List<Point> points, java.util.function.Function<Point, T> f) {
        Set<T> s = new LinkedHashSet<>();
        points.forEach(p -> s.add(f.apply(p)));
        return s;
    }
}
