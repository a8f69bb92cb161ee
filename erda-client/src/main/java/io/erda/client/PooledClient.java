package io.erda.client;

import io.erda.fabric.Fabric;
import io.erda.fabric.FabricException;
import io.erda.protocol.BodyEncoder;
import io.erda.protocol.MessageType;
import io.erda.protocol.StoreInfo;
import io.erda.protocol.WireStatus;
import io.erda.protocol.memory.Key;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.charset.StandardCharsets;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.Semaphore;
import java.util.concurrent.atomic.AtomicReferenceArray;
import java.util.function.Function;

/**
 * What every protocol's client shares: the connection pool, HELLO, request/reply plumbing, STATS, and the
 * {@link KeyValueClient} methods on top of two protocol steps, {@link #read} and {@link #write}.
 *
 * <h2>Threading</h2>
 * Thread-safe. The client owns one {@link Fabric} and a pool of at most {@link ClientOptions#poolSize()}
 * connections, each with its own endpoint, completion queues and registered buffers. Every call borrows one
 * connection for its whole duration (so a connection is only ever used by one thread at a time and needs no
 * locking) and returns it; when all are in use the call waits. Connections are opened lazily, so a
 * single-threaded user holds one. No thread is started by the client: completions are awaited by the caller.
 *
 * <h2>Failures</h2>
 * A fabric error (connection lost, remote access error: verbs semantics leave the endpoint dead) closes that
 * connection and the call is tried once more on a fresh one; a PUT whose WRITE may or may not have landed is
 * simply sent again as a new PUT (last writer wins). A second failure propagates as a {@link FabricException}.
 * Refusals by the server are {@link ErdaException}s carrying its status.
 */
public abstract class PooledClient implements KeyValueClient {
    private final ClientOptions options;
    private final Fabric fabric;
    final ClientStats stats = new ClientStats();
    private final Semaphore permits;
    /**
     * Idle connections, one slot per permit: a borrower holds a permit, so a returned connection always finds an
     * empty slot. Slots rather than a queue, because a queue's node per return was the client's largest allocation
     * per PUT and young pauses sit in the latency a benchmark measures; and the lowest
     * slot is taken first, so a single-threaded user keeps reusing one connection whose buffers stay in cache.
     */
    private final AtomicReferenceArray<ClientConnection> idle;
    private volatile StoreInfo storeInfo;
    private volatile boolean closed;

    PooledClient(ClientOptions options) {
        this.options = options;
        this.fabric = Fabric.open(options.uri());
        this.permits = new Semaphore(options.poolSize());
        this.idle = new AtomicReferenceArray<>(options.poolSize());
    }

    /** Opens one connection (so a wrong URI or a dead server fails at connect, not on first use). */
    static <C extends PooledClient> C connected(C client) {
        PooledClient pool = client;
        try {
            pool.putIdle(pool.open());
        } catch (RuntimeException e) {
            pool.fabric.close();
            throw e;
        }
        return client;
    }

    /**
     * The baselines' limits, checked before anything is sent: a value may be as long as the server's maximum
     * (stated for a 1-byte key) minus the rest of the key. Returns the value length.
     */
    static long checkPairLimits(ClientConnection c, Key key, long valueLength) {
        StoreInfo info = c.view().info();
        if (key.length() > info.maxKeyLength()) {
            throw new IllegalArgumentException("key length " + key.length() + " exceeds the limit " + info.maxKeyLength()
                    + " of this server");
        }
        long limit = (long) info.maxValueLength() + 1 - key.length();
        if (valueLength > limit) {
            throw new IllegalArgumentException("value length " + valueLength + " exceeds the limit " + limit + " for a "
                    + key.length() + "-byte key (" + c.view().info().maxValueLength() + " with a 1-byte key) of this "
                    + "server's " + c.protocolName() + " protocol");
        }
        return valueLength;
    }

    /** The value of {@code key} (valid until the connection's next request), or null if it does not exist. */
    abstract MemorySegment read(ClientConnection c, Key key);

    /** Stores {@code value} under {@code key}, or deletes the key when {@code value} is null; durable on return. */
    abstract void write(ClientConnection c, Key key, MemorySegment value);

    /** Run on each healthy connection when the client closes, before the connection does (a protocol's goodbye). */
    void beforeClose(ClientConnection c) {
    }

    /**
     * Run on the borrowed connection before every operation, also on the fresh one of a retry: the protocol's
     * bookkeeping of what arrived while the connection was idle (Erda's HEAD_STATEs). Nothing by default.
     */
    void beforeOperation(ClientConnection c) {
    }

    @Override
    public byte[] get(byte[] key) {
        Key k = Key.of(MemorySegment.ofArray(key));
        stats.gets.increment();
        return execute(c -> {
            MemorySegment value = read(c, k);
            return value == null ? null : value.toArray(ValueLayout.JAVA_BYTE);
        });
    }

    @Override
    public long get(MemorySegment key, MemorySegment valueOut) {
        Key k = Key.of(key);
        stats.gets.increment();
        return execute(c -> {
            MemorySegment value = read(c, k);
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
            write(c, k, value);
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
            write(c, k, null);
            return null;
        });
    }

    /** The server's STATS ("name=value" lines), in its order. */
    public Map<String, String> serverStats() {
        return nameValueLines(execute(c -> c.call(MessageType.STATS, BodyEncoder.EMPTY,
                reply -> text(reply, MessageType.STATS_REPLY))));
    }

    /** The UTF-8 text body of an OK reply of type {@code expected}. */
    static String text(ClientConnection.Reply reply, MessageType expected) {
        MemorySegment body = reply.expect(expected).body();
        return new String(body.toArray(ValueLayout.JAVA_BYTE), StandardCharsets.UTF_8);
    }

    /** "name=value" lines as a map, in their order. */
    static Map<String, String> nameValueLines(String text) {
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

    /**
     * Work requests this client's fabric posted so far, by the operation that went to the device or engine
     * ({@link Fabric#posted}): what a measurement counts per GET or PUT.
     */
    public java.util.Map<io.erda.fabric.Opcode, Long> postedWorkRequests() {
        return fabric.posted();
    }

    /** The capabilities of this client's fabric, as read from its device ({@link Fabric#capabilities}). */
    public io.erda.fabric.FabricCapabilities fabricCapabilities() {
        return fabric.capabilities();
    }

    public ClientOptions options() {
        return options;
    }

    <T> T execute(Function<ClientConnection, T> operation) {
        ClientConnection c = borrow();
        try {
            try {
                beforeOperation(c);
                return operation.apply(c);
            } catch (ErdaException e) {
                if (e.status() == WireStatus.INTERNAL) {
                    // a reply the protocol does not allow: the connection's request/reply pairing is suspect
                    ClientConnection suspect = c;
                    c = null;
                    suspect.close();
                }
                throw e;
            } catch (WriteOutcomeUnknownException e) {
                ClientConnection broken = c; // dead as below, but the PUT is not tried again: it may have taken effect
                c = null;
                broken.close();
                throw e;
            } catch (FabricException e) {
                // verbs semantics: after an error the endpoint is dead; one retry on a fresh connection
                stats.reconnects.increment();
                ClientConnection broken = c;
                c = null;
                broken.close();
                c = open();
                beforeOperation(c);
                return operation.apply(c);
            }
        } finally {
            release(c);
        }
    }

    private ClientConnection borrow() {
        if (closed) {
            throw new IllegalStateException("client for " + options.uri() + " is closed");
        }
        permits.acquireUninterruptibly();
        ClientConnection c = takeIdle();
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

    private ClientConnection open() {
        ClientConnection c = ClientConnection.open(fabric, options, stats);
        stats.connectionsOpened.increment();
        storeInfo = c.view().info();
        return c;
    }

    /** Returns a connection (null when a reconnect failed) and its permit. */
    private void release(ClientConnection c) {
        try {
            if (c != null) {
                if (c.isBroken() || closed) {
                    c.close();
                } else {
                    putIdle(c);
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
        for (ClientConnection c; (c = takeIdle()) != null; ) {
            try {
                if (!c.isBroken()) {
                    beforeClose(c);
                }
            } catch (RuntimeException e) {
                // best effort: what it would have given back is the server's again when its lease ends
            } finally {
                c.close();
            }
        }
        fabric.close();
    }

    /** An idle connection, the lowest slot's first, or null if none is idle. */
    private ClientConnection takeIdle() {
        for (int i = 0; i < idle.length(); i++) {
            ClientConnection c = idle.get(i) == null ? null : idle.getAndSet(i, null);
            if (c != null) {
                return c;
            }
        }
        return null;
    }

    /** Parks a connection in the lowest empty slot; the caller holds a permit, so there is one. */
    private void putIdle(ClientConnection c) {
        for (int i = 0; i < idle.length(); i++) {
            if (idle.get(i) == null && idle.compareAndSet(i, null, c)) {
                return;
            }
        }
        throw new IllegalStateException("no idle slot among " + idle.length() + " for a returned connection");
    }
}
