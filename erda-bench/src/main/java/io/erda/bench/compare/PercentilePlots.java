package io.erda.bench.compare;

import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.HdrHistogram.Histogram;
import org.knowm.xchart.XYChart;
import org.knowm.xchart.XYChartBuilder;
import org.knowm.xchart.style.Styler;
import org.knowm.xchart.style.markers.SeriesMarkers;

/**
 * One percentile plot per workload ({@code percentiles-W.png}), as HdrHistogram's plotter draws them: latency in µs
 * (log scale) against the percentile on a "nines" axis (1 / (1 - p), log scale, labelled 0%, 90%, 99%, 99.9%, ...),
 * one curve per protocol and operation at the base setting, from the run's full histograms. Open-loop runs draw the
 * latency from the intended start. Both axes plot log10 of the value on a linear axis with our own labels (XChart
 * computes the ticks of a custom-labelled axis linearly, so its own log axes cannot carry them).
 */
final class PercentilePlots {

    private static final int WIDTH = 900;
    private static final int HEIGHT = 540;

    private PercentilePlots() {
    }

    static List<Path> write(List<RunRecord> runs, Map<RunRecord, RunLatency> histograms, int baseValueSize, int baseThreads,
                            int baseClients, Path dir) throws IOException {
        List<Path> files = new ArrayList<>();
        List<RunRecord> base = runs.stream().filter(r -> r.valueSize() == baseValueSize && r.threads() == baseThreads
            && r.clients() == baseClients && histograms.containsKey(r)).toList();
        for (String w : ReportPlots.distinct(base, RunRecord::workload)) {
            List<RunRecord> ofWorkload = base.stream().filter(r -> r.workload().equals(w)).toList();
            boolean openLoop = ofWorkload.stream().anyMatch(r -> r.targetOps() != null);
            String title = "Latency by percentile, YCSB-" + w + ", µs (" + ReportPlots.setting(baseValueSize, baseThreads, baseClients)
                + (openLoop ? "; open loop, from the intended start" : "") + ")";
            XYChart chart = new XYChartBuilder().width(WIDTH).height(HEIGHT).title(title).xAxisTitle("percentile (log scale of 1 / (1 - p))")
                .yAxisTitle("latency, µs (log scale)").build();
            chart.getStyler().setLegendPosition(Styler.LegendPosition.OutsideS).setLegendLayout(Styler.LegendLayout.Horizontal);
            // XChart steps a custom axis linearly and needs distinct labels: a wide spacing puts ticks on whole decades
            chart.getStyler().setXAxisTickMarkSpacingHint(120);
            chart.setCustomXAxisTickLabelsFormatter(x -> AxisLabels.percentile(Math.pow(10, x)));
            chart.setCustomYAxisTickLabelsFormatter(y -> AxisLabels.si(Math.pow(10, y)));
            int series = 0;
            for (RunRecord r : ofWorkload) {
                for (String op : new String[] {"READ", "UPDATE"}) {
                    Histogram h = histograms.get(r).histograms().get((r.targetOps() != null ? "Intended-" : "") + op);
                    if (h == null || h.getTotalCount() == 0) {
                        continue;
                    }
                    List<HdrLatency.Point> curve = HdrLatency.curve(h);
                    // a log axis cannot show 0: a latency recorded as 0 ns (below the clock's resolution) is drawn at 1 ns
                    chart.addSeries(r.protocol() + " " + op.toLowerCase(java.util.Locale.ROOT),
                        curve.stream().map(p -> Math.log10(p.inverseTail())).toList(),
                        curve.stream().map(p -> Math.log10(Math.max(0.001, p.latencyUs()))).toList()).setMarker(SeriesMarkers.NONE);
                    series++;
                }
            }
            if (series > 0) {
                files.add(ReportPlots.save(chart, dir.resolve("percentiles-" + w + ".png")));
            }
        }
        return files;
    }
}
