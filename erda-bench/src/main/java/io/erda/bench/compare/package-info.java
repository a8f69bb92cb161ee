/**
 * The YCSB comparison of Erda, Redo Logging and Read After Write, with Redis as a peer row ({@link YcsbCompare},
 * scripts/ycsb-compare; {@code PeerSystems}: {@code --peers}, the marked rows and the "Erda vs Redis" table): per
 * protocol and value size a fresh server from its backend, a YCSB load, then each {@code Workload} (A, B, C,
 * update-only) as a YCSB JVM of its own ({@code YcsbProcess}, output parsed by {@link YcsbOutput}); NVM bytes and
 * server CPU per operation are the growth of the server's counters over the measured window ({@code CounterWindow}).
 * Each run is a {@link RunRecord}; the report is results.md ({@code ComparisonTable}), summary.json
 * ({@link SummaryJson}) and PNG plots ({@code ReportPlots}).
 *
 * <p>Rules: one server is alive at a time; servers are started and read only through {@code io.erda.bench.backend}, and
 * YCSB reaches them through the binding of {@code io.erda.bench.ycsb}, named by class and watched through its
 * {@code CONNECTED} and {@code CLOSING} lines.
 *
 * <p>Depends on {@code io.erda.bench.backend}, {@code io.erda.bench.ycsb}, XChart, picocli and the JDK; the one
 * erda-server class it names is {@code ErdaServerMain.SizeConverter}, for {@code --region-size}.
 */
package io.erda.bench.compare;
