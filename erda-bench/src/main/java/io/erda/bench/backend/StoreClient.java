package io.erda.bench.backend;

import java.io.IOException;
import java.util.Map;

/**
 * One connection to a key-value store under test, as the YCSB binding and the comparison driver need it: the
 * operations YCSB issues and the server's counters. Not thread-safe; YCSB gives every thread its own.
 */
public interface StoreClient extends AutoCloseable {

    /** The stored value, or null if the key does not exist. */
    byte[] get(byte[] key) throws IOException;

    /** Stores {@code value} under {@code key}; durable when this returns (as the protocol defines durable). */
    void put(byte[] key, byte[] value) throws IOException;

    /** Deletes the key; deleting a missing key is not an error. */
    void delete(byte[] key) throws IOException;

    /**
     * The server's counters ("name=value" lines of a STATS reply): at least {@code nvm_bytes_written} and
     * {@code server_cpu_ns}, cumulative since the server started.
     */
    Map<String, Long> serverStats() throws IOException;

    @Override
    void close() throws IOException;
}
