package io.erda.client;

import io.erda.protocol.CleanRequest;
import io.erda.protocol.MessageType;
import io.erda.protocol.PutReply;
import io.erda.protocol.PutRequest;
import io.erda.protocol.WireStatus;
import io.erda.protocol.memory.Key;
import java.lang.foreign.MemorySegment;
import java.net.URI;
import java.util.Map;

/**
 * The Erda client: GETs with two one-sided READs and no server CPU, PUTs as a two-sided reservation plus a
 * one-sided WRITE straight into the server's PM (see {@link ErdaGet} and {@link ErdaPut}). Pooling, threading and
 * failure handling: {@link PooledClient}.
 *
 * <h2>Log cleaning</h2>
 * The server tells every Erda connection when a head starts and stops being cleaned (HEAD_STATE, paper §4.4); a
 * connection processes those at the start of each call ({@link ClientConnection#catchUp}). GETs of a head being cleaned are
 * two-sided. PUTs stay as they are: the server chooses the address (in the chain the cleaner is filling, once it
 * replicates) and the client only WRITEs there. A client that missed a notification and READs a retired region gets
 * a remote-access error, which is a fabric error like any other ({@link PooledClient}): it reconnects (HELLO brings
 * the current head array) and retries.
 */
public final class ErdaClient extends PooledClient {
    private final ErdaGet gets;
    private final ErdaPut puts;

    private ErdaClient(ClientOptions options, BackupWrites backups) {
        super(options);
        RemoteTable table = new RemoteTable(stats);
        ObjectReader objects = new ObjectReader(stats);
        this.gets = new ErdaGet(stats, table, objects, options);
        this.puts = new ErdaPut(stats, table, backups, objects);
    }

    /**
     * The client of the one server at {@code uri}, a fabric URI ({@code tcp://}, {@code shm://}, {@code verbs://}),
     * with default options. A cluster's URI ({@code zk://}) is refused here: {@link KeyValueClient#connect(URI)}
     * takes either.
     */
    public static ErdaClient connect(URI uri) {
        ClientProvider provider = ClientProvider.forScheme(uri.getScheme());
        if (provider != null) {
            throw new IllegalArgumentException(uri + " is not one server's URI but " + provider.getClass().getName()
                    + "'s (" + provider.scheme() + "://): connect with KeyValueClient.connect(URI)");
        }
        return connect(ClientOptions.of(uri));
    }

    /** Opens the fabric and one connection (so a wrong URI or a dead server fails here, not on first use). */
    public static ErdaClient connect(ClientOptions options) {
        return connect(options, BackupWrites.NONE);
    }

    /**
     * A client of one server of a cluster ([cluster]): a PUT whose reply names a backup reservation WRITEs there
     * through {@code backups} too before it returns.
     */
    public static ErdaClient connect(ClientOptions options, BackupWrites backups) {
        return connected(new ErdaClient(options.withProtocol(ClientOptions.Protocol.ERDA), backups));
    }

    /**
     * [cluster], the backup's half of a replicated PUT: WRITEs {@code object} to {@code reservation} (made on this
     * client's server by the shard's primary) and applies this server's persistence method.
     */
    public void writeReserved(PutReply reservation, MemorySegment object) {
        if (object.byteSize() != reservation.objectLength()) {
            throw new IllegalArgumentException("object of " + object.byteSize() + " bytes for a reservation of "
                    + reservation.objectLength());
        }
        execute(c -> {
            c.writes.ensure(object.byteSize());
            MemorySegment.copy(object, 0, c.writes.segment(), 0, object.byteSize());
            c.sync().write(c.writes.region(), 0, reservation.objectLength(), reservation.address(), reservation.rkey());
            ErdaPut.persist(c, reservation);
            return null;
        });
    }

    /**
     * [cluster], what a primary asks its backup: reserve room for {@code key}'s object as a replica reservation
     * (a client WRITEs it), under the map assignment {@code assignment} (the epoch that made the server the shard's
     * backup), forwarded by {@code sender} (the primary's session and tag, {@link io.erda.protocol.ReplicaSender}).
     * Returns null for a DELETE of a key this server does not have.
     */
    public PutReply reserveReplica(MemorySegment key, int valueLength, boolean delete, int assignment,
                                   io.erda.protocol.ReplicaSender sender) {
        PutRequest request = PutRequest.replica(delete, valueLength, key, assignment, sender);
        try {
            return execute(c -> c.call(MessageType.PUT, request::encode,
                    r -> PutReply.decode(r.expect(MessageType.PUT_REPLY).body(), 0, (int) r.body().byteSize())));
        } catch (ErdaException e) {
            if (delete && e.status() == WireStatus.NOT_FOUND) {
                return null;
            }
            throw e;
        }
    }

    /** Paper §4.4: the HEAD_STATEs that arrived while the connection was idle, before the operation reads a head. */
    @Override
    void beforeOperation(ClientConnection c) {
        c.catchUp();
        puts.returnStaleBlocks(c);
    }

    /** One-sided mode: gives the connection's leased blocks back, so a cleaning need not wait out their leases. */
    @Override
    void beforeClose(ClientConnection c) {
        puts.returnAllBlocks(c);
    }

    @Override
    MemorySegment read(ClientConnection c, Key key) {
        return gets.get(c, key);
    }

    @Override
    void write(ClientConnection c, Key key, MemorySegment value) {
        puts.put(c, key, value);
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
}
