package io.erda.bench.backend;

/** A running server of a store under test; closing it stops it and releases its resources. */
public interface StoreServer extends AutoCloseable {

    /** Where clients connect, as printed by the server ("erda-server listening on URI"). */
    String uri();

    @Override
    void close() throws Exception;
}
