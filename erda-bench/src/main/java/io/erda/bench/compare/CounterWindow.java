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
