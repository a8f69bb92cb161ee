package io.erda.bench.compare;

import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.function.Function;

/**
 * The peer rows of the comparison (--peers): systems of another kind that users pick today, run on the same harness
 * after the Erda protocols. Only Redis so far: two-sided, one server thread, AOF on the same tmpfs; results.md marks
 * its rows and compares it with Erda in a table of its own ("Erda vs Redis").
 */
final class PeerSystems {

    static final String REDIS = "redis";
    static final List<String> KNOWN = List.of(REDIS);
    static final String NONE = "none";

    private PeerSystems() {
    }

    /**
     * {@code protocols} followed by the peers {@code --peers} names that are not already among them; {@code none}
     * (alone) adds nothing. Throws {@link IllegalArgumentException} naming an unknown value.
     */
    static List<String> withPeers(List<String> protocols, List<String> peers) {
        List<String> all = new ArrayList<>(protocols);
        if (peers.equals(List.of(NONE))) {
            return all;
        }
        for (String p : peers) {
            if (!KNOWN.contains(p)) {
                throw new IllegalArgumentException("--peers " + String.join(",", peers) + ": " + p + " is not one of "
                    + KNOWN + " (or " + NONE + " alone)");
            }
            if (!all.contains(p)) {
                all.add(p);
            }
        }
        return all;
    }

    /** The protocol's name in the report's tables and plot legends: a peer's says what kind of system it is. */
    static String label(String protocol) {
        return protocol.equals(REDIS) ? "redis (two-sided, 1 server thread)" : protocol;
    }

    /**
     * results.md's "Erda vs Redis": per setting ({@link ComparisonTable#sameSetting}: fabric, workload, value size,
     * client processes, threads, open-loop target) that has both an Erda and a Redis run, their figures side by side
     * and Erda ÷ Redis; empty if there is no such pair. Each row says its client processes: {@code --full} sweeps
     * them, and an Erda run of K processes is paired only with a Redis run of K.
     */
    static String markdown(List<RunRecord> runs) {
        StringBuilder rows = new StringBuilder();
        for (RunRecord erda : runs) {
            if (!erda.protocol().equals("erda")) {
                continue;
            }
            RunRecord redis = runs.stream().filter(o -> o.protocol().equals(REDIS) && ComparisonTable.sameSetting(o, erda))
                .findFirst().orElse(null);
            if (redis == null) {
                continue;
            }
            rows.append(String.format(Locale.ROOT, "| %s | %s | %d | %d | %d | %s | %s | %s | %s | %s | %s | %s |%n",
                erda.fabric(), erda.workload(), erda.valueSize(), erda.clients(), erda.threads(),
                ComparisonTable.fmt(erda.throughputOps()), ComparisonTable.fmt(redis.throughputOps()),
                ComparisonTable.ratio(erda, redis, RunRecord::throughputOps),
                pair(erda, redis, RunRecord::readMeanUs), pair(erda, redis, RunRecord::updateMeanUs),
                pair(erda, redis, RunRecord::serverCpuUsPerOp), pair(erda, redis, RunRecord::nvmBytesPerOp)));
        }
        if (rows.isEmpty()) {
            return "";
        }
        return "\n## Erda vs Redis (same run)\n\n"
            + "Redis is a different kind of system: two-sided (its one server thread executes every GET and SET), reached"
            + " over loopback TCP whatever the fabric of the Erda rows, its data in DRAM, made durable by an append-only"
            + " file with appendfsync always (each write fsynced before the reply) on the same tmpfs as the PM files. The"
            + " PM write-latency model does not apply to it. Its server CPU is redis-server's process CPU time"
            + " (/proc utime + stime, 10 ms ticks, kernel included); its bytes per operation are the growth of its AOF,"
            + " where Erda's are NVM bytes stored.\n\n"
            + "Each row pairs an Erda and a Redis run with the same number of client processes (YCSB JVMs) and of"
            + " threads in each; throughput is summed over the processes.\n\n"
            + "| fabric | workload | value B | client processes | threads each | Erda ops/s | Redis ops/s "
            + "| throughput Erda ÷ Redis | read mean µs Erda / Redis | update mean µs Erda / Redis "
            + "| server CPU µs/op Erda / Redis | Erda NVM B/op / Redis AOF B/op |\n"
            + "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n" + rows;
    }

    private static String pair(RunRecord erda, RunRecord redis, Function<RunRecord, Double> figure) {
        Double a = figure.apply(erda);
        Double b = figure.apply(redis);
        return a == null && b == null ? "—" : ComparisonTable.fmt(a) + " / " + ComparisonTable.fmt(b);
    }
}
