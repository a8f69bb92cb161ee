package io.erda.server.baseline;

import io.erda.server.platform.DaemonThreads;
import io.erda.core.pm.WriteLatencyModel;
import io.erda.fabric.Fabric;
import io.erda.server.request.ErdaProtocolHandler;
import io.erda.server.request.Protocol;
import io.erda.server.request.Request;
import io.erda.server.store.Store;
import io.erda.server.store.StoreStats;
import java.nio.file.Path;
import java.util.List;
import java.util.function.ObjLongConsumer;

/**
 * The two baselines of paper §5.1 as the server hosts them beside Erda: the Redo Logging PM log with its applier
 * and the Read After Write PM ring with its poller, both applying into the same {@link Store} asynchronously. The
 * server registers the two {@link Protocol}s this class gives ({@link #redoLog}, {@link #readAfterWrite}) beside
 * Erda's; the request path knows them only as such, and never builds a baseline itself.
 */
public final class Baselines implements AutoCloseable {
    /** Reply buffers of a redo-log connection (one per PM receive buffer); larger replies get a buffer of their own. */
    static final int REDO_REPLY_SIZE = 16 << 10;

    private final Fabric fabric;
    private final Store store;
    private final RedoLog redoLog;
    private final ReadAfterWriteRing ring;

    private Baselines(Fabric fabric, Store store, RedoLog redoLog, ReadAfterWriteRing ring) {
        this.fabric = fabric;
        this.store = store;
        this.redoLog = redoLog;
        this.ring = ring;
    }

    /** Opens (or creates) both PM files in the store's directory and replays what they hold unapplied. */
    public static Baselines open(Path directory, WriteLatencyModel latency, Fabric fabric, Store store,
                                 StoreStats stats) {
        RedoLog redoLog = RedoLog.open(directory, latency, fabric, store, stats);
        try {
            return new Baselines(fabric, store, redoLog, ReadAfterWriteRing.open(directory, latency, fabric, store,
                    stats));
        } catch (RuntimeException e) {
            redoLog.close();
            throw e;
        }
    }

    /** Starts the redo applier and the ring poller (daemon threads; {@link #stop} ends them). */
    public List<Thread> start(DaemonThreads threads) {
        return List.of(threads.start("erda-redo-applier", redoLog::run), threads.start("erda-ring-poller", ring::run));
    }

    /**
     * Redo Logging ({@code ConnectData.PROTOCOL_REDO_LOG}): a connection's receive buffers are a free lane of the PM
     * redo log, where its SENDs land; HELLO and STATS are answered as {@code common} answers them.
     */
    public Protocol redoLog(ErdaProtocolHandler common) {
        return new Protocol(redoLog::takeLane, REDO_REPLY_SIZE, false, (connection, buffers) ->
                new RedoLogProtocolHandler(common, store, redoLog, (RedoLog.Lane) buffers, connection));
    }

    /**
     * Read After Write ({@code ConnectData.PROTOCOL_READ_AFTER_WRITE}): a connection's requests land in DRAM, as
     * Erda's do; HELLO and STATS are answered as {@code common} answers them.
     */
    public Protocol readAfterWrite(ErdaProtocolHandler common) {
        return Protocol.inDram(fabric, false, (connection, buffers) ->
                new ReadAfterWriteProtocolHandler(common, store, ring, Request.MAX_MESSAGE_LENGTH));
    }

    /** Bytes both PM files took: the server's own stores plus, for the ring, clients' WRITEs. */
    public long bytesWritten() {
        return redoLog.bytesWritten() + ring.bytesWritten();
    }

    /** The part of {@link #bytesWritten} that clients wrote one-sided (the ring's slots). */
    public long remoteBytesWritten() {
        return ring.remoteBytesWritten();
    }

    /** The baselines' STATS lines, in reply order. */
    public void stats(ObjLongConsumer<String> line) {
        line.accept("redo_pending", redoLog.pending());
        line.accept("redo_applied", redoLog.applied());
        line.accept("redo_replayed", redoLog.replayed());
        line.accept("ring_pending", ring.pending());
        line.accept("ring_applied", ring.applied());
        line.accept("ring_expired", ring.expired());
        line.accept("ring_replayed", ring.replayed());
    }

    /** Asks the applier and the poller to stop (before their threads are interrupted and joined). */
    public void stop() {
        redoLog.stop();
        ring.stop();
    }

    @Override
    public void close() {
        redoLog.close();
        ring.close();
    }
}
