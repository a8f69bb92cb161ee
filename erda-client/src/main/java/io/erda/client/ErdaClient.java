package io.erda.client;

import io.erda.core.wire.CleanRequest;
import io.erda.core.wire.MessageType;
import io.erda.core.wire.StoreInfo;
import io.erda.core.wire.WireStatus;
import io.erda.fabric.Fabric;
import io.erda.fabric.FabricException;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.Semaphore;
import java.util.function.Function;

/**
 * The Erda client: GETs with two one-sided READs and no server CPU, PUTs as a two-sided reservation plus a
 * one-sided WRITE straight into the server's PM (see {@link ErdaGet} and {@link ErdaPut}).
 *
 * <h2>Threading</h2>
 * Thread-safe. The client owns one {@link Fabric} and a pool of at most {@link ClientOptions#poolSize()}
 * connections, each with its own endpoint, completion queues and registered buffers. Every call borrows one
 * connection for its whole duration (so a connection is only ever used by one thread at a time and needs no
 * locking) and returns it; when all are in use the call waits. Connections are opened lazily, so a
 * single-threaded user holds one. No thread is started by the client: completions are awaited by the caller.
 *
 * <h2>Log cleaning</h2>
 * The server tells every connection when a head starts and stops being cleaned (HEAD_STATE, paper §4.4); a
 * connection processes those at the start of each call. GETs of a head being cleaned are two-sided. PUTs stay as
 * they are: the server chooses the address (in the chain the cleaner is filling, once it replicates) and the client
 * only WRITEs there. A client that missed a notification and READs a retired region gets a remote-access error,
 * which is a fabric error like any other below: it reconnects (HELLO brings the current head array) and retries.
 *
 * <h2>Failures</h2>
 * A fabric error (connection lost, remote access error: verbs semantics leave the endpoint dead) closes that
 * connection and the call is tried once more on a fresh one; a PUT whose WRITE may or may not have landed is
 * simply sent again as a new PUT (last writer wins). A second failure propagates as a {@link FabricException}.
 * Refusals by the server are {@link ErdaException}s carrying its status.
 */
public final class ErdaClient implements KeyValueClient {
    private final ClientOptions options;
    private final Fabric fabric;
    private final ClientStats stats = new ClientStats();
    private final ErdaGet gets;
    private final ErdaPut puts;
    private final Semaphore permits;
    private final ConcurrentLinkedQueue<Connection> idle = new ConcurrentLinkedQueue<>();
    private volatile StoreInfo storeInfo;
    private volatile boolean closed;

    private ErdaClient(ClientOptions options, Fabric fabric) {
        this.options = options;
        this.fabric = fabric;
        this.permits = new Semaphore(options.poolSize());
        this.gets = new ErdaGet(stats, new ObjectReader(stats), options);
        this.puts = new ErdaPut(stats, gets);
    }

    public static ErdaClient connect(URI uri) {
        return connect(ClientOptions.of(uri));
    }

    /** Opens the fabric and one connection (so a wrong URI or a dead server fails here, not on first use). */
    public static ErdaClient connect(ClientOptions options) {
        Fabric fabric = Fabric.open(options.uri());
        ErdaClient client = new ErdaClient(options, fabric);
        try {
            client.idle.add(client.open());
        } catch (RuntimeException e) {
            fabric.close();
            throw e;
        }
        return client;
    }

    @Override
    public byte[] get(byte[] key) {
        Key k = Key.of(MemorySegment.ofArray(key));
        stats.gets.increment();
        return execute(c -> {
            MemorySegment value = gets.get(c, k);
            return value == null ? null : value.toArray(ValueLayout.JAVA_BYTE);
        });
    }

    @Override
    public long get(MemorySegment key, MemorySegment valueOut) {
        Key k = Key.of(key);
        stats.gets.increment();
        return execute(c -> {
            MemorySegment value = gets.get(c, k);
            if (value == null) {
                return -1L;
            }
            if (value.byteSize() <= valueOut.byteSize()) {
                MemorySegment.copy(value, 0, valueOut, 0, value.byteSize());
            }
            return value.byteSize();
        });
    }

    @Override
    public void put(byte[] key, byte[] value) {
        put(MemorySegment.ofArray(key), MemorySegment.ofArray(value));
    }

    @Override
    public void put(MemorySegment key, MemorySegment value) {
        Key k = Key.of(key);
        stats.puts.increment();
        execute(c -> {
            puts.put(c, k, value);
            return null;
        });
    }

    @Override
    public void delete(byte[] key) {
        delete(MemorySegment.ofArray(key));
    }

    @Override
    public void delete(MemorySegment key) {
        Key k = Key.of(key);
        stats.deletes.increment();
        execute(c -> {
            puts.put(c, k, null);
            return null;
        });
    }

    /** The server's STATS ("name=value" lines), in its order. */
    public Map<String, String> serverStats() {
        return nameValueLines(execute(c -> c.call(MessageType.STATS, (s, o) -> 0, reply -> text(reply, MessageType.STATS_REPLY))));
    }

    /**
     * Admin: has the server clean {@code head} now (paper §4.4) and returns the run's report ("name=value", in the
     * server's order: bytes occupied before and after, live bytes copied, phase durations, time in two-sided mode).
     * Waits for the whole run, at most the operation timeout; the head must not be being cleaned already.
     */
    public Map<String, String> clean(int head) {
        return nameValueLines(execute(c -> c.call(MessageType.CLEAN, new CleanRequest(head)::encode,
                reply -> text(reply, MessageType.CLEAN_REPLY))));
    }

    private static String text(Connection.Reply reply, MessageType expected) {
        MemorySegment body = reply.expect(expected).body();
        return new String(body.toArray(ValueLayout.JAVA_BYTE), StandardCharsets.UTF_8);
    }

    private static Map<String, String> nameValueLines(String text) {
        Map<String, String> stats = new LinkedHashMap<>();
        for (String line : text.split("\n")) {
            int eq = line.indexOf('=');
            if (eq > 0) {
                stats.put(line.substring(0, eq).trim(), line.substring(eq + 1).trim());
            }
        }
        return stats;
    }

    /** What the server said in the HELLO of the most recently opened connection. */
    public StoreInfo storeInfo() {
        return storeInfo;
    }

    public ClientStats stats() {
        return stats;
    }

    public ClientOptions options() {
        return options;
    }

    private <T> T execute(Function<Connection, T> operation) {
        Connection c = borrow();
        try {
            try {
                c.catchUp();
                return operation.apply(c);
            } catch (ErdaException e) {
                if (e.status() == WireStatus.INTERNAL) {
                    // a reply the protocol does not allow: the connection's request/reply pairing is suspect
                    Connection suspect = c;
                    c = null;
                    suspect.close();
                }
                throw e;
            } catch (FabricException e) {
                // verbs semantics: after an error the endpoint is dead; one retry on a fresh connection
                stats.reconnects.increment();
                Connection broken = c;
                c = null;
                broken.close();
                c = open();
                c.catchUp();
                return operation.apply(c);
            }
        } finally {
            release(c);
        }
    }

    private Connection borrow() {
        if (closed) {
            throw new IllegalStateException("client for " + options.uri() + " is closed");
        }
        permits.acquireUninterruptibly();
        Connection c = idle.poll();
        if (c != null) {
            return c;
        }
        try {
            return open();
        } catch (RuntimeException e) {
            permits.release();
            throw e;
        }
    }

    private Connection open() {
        Connection c = Connection.open(fabric, options, stats);
        storeInfo = c.view().info();
        return c;
    }

    /** Returns a connection (null when a reconnect failed) and its permit. */
    private void release(Connection c) {
        try {
            if (c != null) {
                if (c.isBroken() || closed) {
                    c.close();
                } else {
                    idle.add(c);
                }
            }
        } finally {
            permits.release();
        }
    }

    @Override
    public void close() {
        if (closed) {
            return;
        }
        closed = true;
        permits.acquireUninterruptibly(options.poolSize());
        for (Connection c; (c = idle.poll()) != null; ) {
            c.close();
        }
        fabric.close();
    }
}
