package io.erda.client;

import java.lang.foreign.MemorySegment;

/**
 * A key-value store client: GET, PUT and DELETE on byte keys and values. Erda ({@link ErdaClient}) is one
 * implementation; the baselines ({@link RedoLogClient}, {@link ReadAfterWriteClient}) are others, so benchmarks and
 * tests drive every protocol through this one interface.
 *
 * <p>Keys are 1 to 65535 bytes. A PUT or DELETE that returns has reached the server's persistence domain. Every
 * implementation is thread-safe; see the implementation for its threading model.
 */
public interface KeyValueClient extends AutoCloseable {

    /**
     * The client for {@code uri} with default options: a fabric URI ({@code tcp://}, {@code shm://},
     * {@code verbs://}) gives the single-server {@link ErdaClient}; a URI a {@link ClientProvider} serves gives that
     * provider's, such as {@code zk://host:port/erda} for a cluster when erda-cluster-client is on the class path.
     */
    static KeyValueClient connect(java.net.URI uri) {
        return connect(ClientOptions.of(uri));
    }

    /**
     * Connects with the client of {@link ClientOptions#protocol()}, or, for a URI scheme a {@link ClientProvider}
     * serves (erda-cluster-client's {@code zk://}), with that provider's client.
     */
    static KeyValueClient connect(ClientOptions options) {
        ClientProvider provider = ClientProvider.forScheme(options.uri().getScheme());
        if (provider != null) {
            return provider.connect(options);
        }
        return switch (options.protocol()) {
            case ERDA -> ErdaClient.connect(options);
            case REDO_LOG -> RedoLogClient.connect(options);
            case READ_AFTER_WRITE -> ReadAfterWriteClient.connect(options);
            case HERD, RDMP_SA, RDMP_CC -> RdmpClient.connect(options);
        };
    }

    /** The value of {@code key}, or null if the key does not exist (or was deleted). */
    byte[] get(byte[] key);

    /** Stores {@code value} under {@code key}, replacing any earlier value. */
    void put(byte[] key, byte[] value);

    /** Deletes {@code key}; deleting a missing key is not an error. */
    void delete(byte[] key);

    /**
     * Copy-avoiding GET: copies the value into {@code valueOut} if it fits and returns its length; returns -1 if
     * the key does not exist. If the value is longer than {@code valueOut}, nothing is copied and the length is
     * returned, so the caller can retry with a larger segment (as {@code snprintf} does).
     */
    long get(MemorySegment key, MemorySegment valueOut);

    /** Copy-avoiding PUT: the value is read straight from {@code value} (heap or native) into registered memory. */
    void put(MemorySegment key, MemorySegment value);

    void delete(MemorySegment key);

    @Override
    void close();
}
