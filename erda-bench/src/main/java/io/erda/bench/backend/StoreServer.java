package io.erda.bench.backend;

import java.io.IOException;
import java.util.Map;

/** A running server of a store under test; closing it stops it and releases its resources. */
public interface StoreServer extends AutoCloseable {

    /** Where clients connect, as printed by the server ("erda-server listening on URI"). */
    String uri();

    /**
     * The server's counters ("name=value" lines of a STATS reply): at least {@code nvm_bytes_written} and
     * {@code server_cpu_ns}, cumulative since the server started.
     */
    Map<String, Long> stats() throws IOException;

    @Override
    void close() throws Exception;
}
