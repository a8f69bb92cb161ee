/**
 * {@link CleanerBench} (scripts/cleaner-bench; paper §5.5, Fig. 26): one client's read and write latency under normal
 * operation and while the server cleans its only head back to back (admin CLEAN), with each cleaning run's report (MB/s
 * copied, time in two-sided mode, bytes before and after).
 *
 * <p>The cleaner is measured as clients see it: the server is a process of its own and cleaning is asked for over the
 * wire. Depends on {@code io.erda.bench.backend} ({@code ServerProcess}), erda-client, HdrHistogram, picocli and the
 * JDK; not on erda-cleaner or erda-server classes (the server's main class is named, not linked).
 */
package io.erda.bench.cleaner;
