/**
 * The YCSB comparison of Erda, Redo Logging and Read After Write, with Redis as a peer row ({@link YcsbCompare},
 * scripts/ycsb-compare; {@code PeerSystems}: {@code --peers}, the marked rows and the "Erda vs Redis" table): per
 * protocol and value size a fresh server from its backend, a YCSB load, then each {@code Workload} (A, B, C,
 * update-only) as one or several YCSB JVMs of its own ({@code YcsbProcess}: a warm-up no figure sees, then the
 * measured phase, closed or open loop; output parsed by {@link YcsbOutput}); NVM bytes and server CPU per operation
 * are the growth of the server's counters over the measured window ({@code CounterWindow}); latency comes from the
 * full HdrHistogram logs YCSB writes, summed over processes ({@code RunLatency}, {@code HdrLatency}).
 * Each run is a {@link RunRecord}; the report is results.md ({@code ComparisonTable}, {@code LatencyTable}),
 * summary.json ({@link SummaryJson}) and PNG plots ({@code ReportPlots}, {@code PercentilePlots}; tick labels by
 * {@code AxisLabels}).
 *
 * <p>Rules: one server is alive at a time; servers are started and read only through {@code io.erda.bench.backend}, and
 * YCSB reaches them through the binding of {@code io.erda.bench.ycsb}, named by class and watched through its
 * {@code CONNECTED} and {@code CLOSING} lines.
 *
 * <p>Depends on {@code io.erda.bench.backend}, {@code io.erda.bench.ycsb}, XChart, HdrHistogram, picocli and the JDK; the one
 * erda-server class it names is {@code ErdaServerMain.SizeConverter}, for {@code --region-size}.
 */
package io.erda.bench.compare;
