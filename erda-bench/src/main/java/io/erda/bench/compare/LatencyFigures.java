package io.erda.bench.compare;

/**
 * One operation type's latency over a run's measured window, from its full HdrHistogram (all client processes
 * added), in µs.
 *
 * @param count  operations recorded
 * @param meanUs mean
 * @param p50Us  median
 * @param p99Us  99th percentile
 * @param p999Us 99.9th percentile
 * @param maxUs  maximum
 */
public record LatencyFigures(long count, double meanUs, double p50Us, double p99Us, double p999Us, double maxUs) {
}
