package io.erda.bench.compare;

import io.erda.bench.backend.StoreServer;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.Map;
import java.util.TreeSet;

/**
 * The server's counters at the start and end of a run's measured window: from when every YCSB thread has
 * connected until the first disconnects, so connecting (HELLO, accept) is not charged to the operations. If YCSB
 * never signals (it failed first), the window is whatever was read last.
 */
final class CounterWindow {
    private final StoreServer server;
    private volatile Map<String, Long> before;
    private volatile Map<String, Long> after;

    CounterWindow(StoreServer server) {
        this.server = server;
    }

    void open() {
        before = read();
    }

    void close() {
        after = read();
    }

    Map<String, Long> before() {
        return before != null ? before : Map.of();
    }

    Map<String, Long> after() {
        if (after == null) {
            after = read();
        }
        return after;
    }

    /** Work a server still owes for operations already acknowledged: unsettled leases, unapplied redo or ring entries. */
    static boolean owesWork(Map<String, Long> stats) {
        return stats.getOrDefault("pending_leases", 0L) > 0 || stats.getOrDefault("redo_pending", 0L) > 0
                || stats.getOrDefault("ring_pending", 0L) > 0;
    }

    /**
     * Waits until the server owes no work (see {@link #owesWork}) or {@code maxWaitMillis} passed; returns its last
     * counters. Before a run, so that a previous run's debts are not charged to it; after a run that ended owing work,
     * so that the work its operations caused (lease validation, the baselines' asynchronous apply: CPU and the second
     * NVM write) is charged to it.
     */
    Map<String, Long> settle(long maxWaitMillis) {
        long deadline = System.nanoTime() + maxWaitMillis * 1_000_000;
        Map<String, Long> s = read();
        while (owesWork(s) && System.nanoTime() < deadline) {
            try {
                Thread.sleep(50);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                break;
            }
            s = read();
        }
        return s;
    }

    /**
     * The counters at the end of the window, with the server's CPU and NVM bytes taken after it settled the work the
     * window's operations left owing (if any): connection teardown stays out, deferred work comes in.
     */
    Map<String, Long> afterSettled(long maxWaitMillis) {
        Map<String, Long> a = after();
        if (!owesWork(a)) {
            return a;
        }
        Map<String, Long> settled = settle(maxWaitMillis);
        Map<String, Long> merged = new java.util.HashMap<>(a);
        for (String name : new String[] {"server_cpu_ns", "nvm_bytes_written", "nvm_bytes_local", "nvm_bytes_cleaner",
            "engine_cpu_ns"}) {
            if (settled.containsKey(name)) {
                merged.put(name, settled.get(name));
            }
        }
        after = merged;
        return merged;
    }

    /** before, after and growth of every counter, one per line (raw/LABEL.stats). */
    String describe() {
        StringBuilder b = new StringBuilder("# server counters over the measured window: name before after growth\n");
        Map<String, Long> a = after();
        for (String name : new TreeSet<>(a.keySet())) {
            Long x = before().get(name);
            b.append(name).append(' ').append(x).append(' ').append(a.get(name)).append(' ')
                .append(x == null ? "?" : Long.toString(a.get(name) - x)).append('\n');
        }
        return b.toString();
    }

    private Map<String, Long> read() {
        try {
            return server.stats();
        } catch (IOException e) {
            throw new UncheckedIOException("reading the server's counters failed: " + e.getMessage(), e);
        }
    }
}
