package io.erda.client;

import java.lang.foreign.MemorySegment;
import java.net.URI;

/**
 * The Erda client: GETs with two one-sided READs and no server CPU, PUTs as a two-sided reservation plus a
 * one-sided WRITE straight into the server's PM (see {@link ErdaGet} and {@link ErdaPut}). Pooling, threading and
 * failure handling: {@link PooledClient}.
 */
public final class ErdaClient extends PooledClient {
    private final ErdaGet gets;
    private final ErdaPut puts;

    private ErdaClient(ClientOptions options) {
        super(options);
        this.gets = new ErdaGet(stats, new ObjectReader(stats), options);
        this.puts = new ErdaPut(stats, gets);
    }

    public static ErdaClient connect(URI uri) {
        return connect(ClientOptions.of(uri));
    }

    /** Opens the fabric and one connection (so a wrong URI or a dead server fails here, not on first use). */
    public static ErdaClient connect(ClientOptions options) {
        return connected(new ErdaClient(options.withProtocol(ClientOptions.Protocol.ERDA)));
    }

    @Override
    MemorySegment read(Connection c, Key key) {
        return gets.get(c, key);
    }

    @Override
    void write(Connection c, Key key, MemorySegment value) {
        puts.put(c, key, value);
    }
}
