package io.erda.remotelog;

import org.HdrHistogram.Histogram;

/**
 * The latency of one method's appends, with no emulation attached (the power-failure model is off the path): a
 * warm-up that is not recorded, then timed appends into an HdrHistogram, and the responder's CPU per append (its
 * thread's CPU time, waiting included, plus the provider's engine threads on its side, e.g. tcp's software RNIC).
 */
public final class AppendTiming {

    /** Microsecond figures of one method's timed appends. */
    public record Result(int appends, double meanMicros, double p50Micros, double p99Micros, double serverCpuMicros) {
    }

    private AppendTiming() {
    }

    public static Result run(RemoteLog log, Method method, int warmup, int appends) {
        LogLayout layout = log.layout();
        if (warmup + appends > layout.capacity()) {
            throw new IllegalArgumentException("warm-up " + warmup + " and " + appends + " appends exceed the log's "
                    + layout.capacity() + " records");
        }
        log.attach(null);
        log.server().restore(new byte[Math.toIntExact(layout.byteSize())]);
        Appender appender = log.appender();
        long position = 0;
        for (int i = 0; i < warmup; i++, position++) {
            appender.append(method, position, position + 1);
        }
        appender.sync();
        Histogram histogram = new Histogram(3);
        long cpu0 = log.server().cpuNanos();
        long engine0 = log.responderStats().engineCpuNanos();
        for (int i = 0; i < appends; i++, position++) {
            long start = System.nanoTime();
            appender.append(method, position, position + 1);
            histogram.recordValue(System.nanoTime() - start);
        }
        appender.sync();
        long cpu = log.server().cpuNanos() - cpu0 + log.responderStats().engineCpuNanos() - engine0;
        PowerFailures.requireHealthy(log);
        return new Result(appends, histogram.getMean() / 1e3, histogram.getValueAtPercentile(50) / 1e3,
                histogram.getValueAtPercentile(99) / 1e3, cpu / 1e3 / appends);
    }
}
