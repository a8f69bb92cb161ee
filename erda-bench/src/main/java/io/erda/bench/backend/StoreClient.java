package io.erda.bench.backend;

import java.io.IOException;

/**
 * One connection to a key-value store under test: the operations YCSB issues. Not thread-safe; YCSB gives every
 * thread its own.
 */
public interface StoreClient extends AutoCloseable {

    /** The stored value, or null if the key does not exist. */
    byte[] get(byte[] key) throws IOException;

    /** Stores {@code value} under {@code key}; durable when this returns (as the protocol defines durable). */
    void put(byte[] key, byte[] value) throws IOException;

    /** Deletes the key; deleting a missing key is not an error. */
    void delete(byte[] key) throws IOException;

    @Override
    void close() throws IOException;
}
