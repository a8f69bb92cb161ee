package io.erda.server.baseline;

import io.erda.core.pm.WriteLatencyModel;
import io.erda.fabric.Fabric;
import io.erda.protocol.ConnectData;
import io.erda.server.Connection;
import io.erda.server.ErdaProtocolHandler;
import io.erda.server.ProtocolHandler;
import io.erda.server.ReceiveBuffers;
import io.erda.server.Store;
import io.erda.server.StoreStats;
import java.nio.file.Path;
import java.util.List;
import java.util.function.ObjLongConsumer;

/**
 * The two baselines of paper §5.1 as the server hosts them beside Erda: the Redo Logging PM log with its applier
 * and the Read After Write PM ring with its poller, both applying into the same {@link Store} asynchronously. The
 * request server asks this class for a Redo Logging connection's receive buffers (a lane of the PM redo log) and
 * for each baseline connection's protocol handler; it never builds a baseline itself.
 */
public final class Baselines implements AutoCloseable {
    /** Reply buffers of a redo-log connection (one per PM receive buffer); larger replies get a buffer of their own. */
    public static final int REDO_REPLY_SIZE = 16 << 10;

    private final Store store;
    private final RedoLog redoLog;
    private final ReadAfterWriteRing ring;

    private Baselines(Store store, RedoLog redoLog, ReadAfterWriteRing ring) {
        this.store = store;
        this.redoLog = redoLog;
        this.ring = ring;
    }

    /** Opens (or creates) both PM files in the store's directory and replays what they hold unapplied. */
    public static Baselines open(Path directory, WriteLatencyModel latency, Fabric fabric, Store store,
                                 StoreStats stats) {
        RedoLog redoLog = RedoLog.open(directory, latency, fabric, store, stats);
        try {
            return new Baselines(store, redoLog, ReadAfterWriteRing.open(directory, latency, fabric, store, stats));
        } catch (RuntimeException e) {
            redoLog.close();
            throw e;
        }
    }

    /** Starts the redo applier and the ring poller (daemon threads; {@link #stop} ends them). */
    public List<Thread> start() {
        return List.of(Thread.ofPlatform().name("erda-redo-applier").daemon().start(redoLog::run),
                Thread.ofPlatform().name("erda-ring-poller").daemon().start(ring::run));
    }

    /** A free lane of the PM redo log: where a Redo Logging connection's SENDs land. */
    public ReceiveBuffers takeRedoLane() {
        return redoLog.takeLane();
    }

    /** The handler of a baseline connection; {@code buffers} are the ones taken for it. */
    public ProtocolHandler handler(int protocol, ErdaProtocolHandler erda, ReceiveBuffers buffers,
                                   Connection connection, int maxMessageLength) {
        return switch (protocol) {
            case ConnectData.PROTOCOL_REDO_LOG -> new RedoLogProtocolHandler(erda, store, redoLog,
                    (RedoLog.Lane) buffers, connection);
            case ConnectData.PROTOCOL_READ_AFTER_WRITE -> new ReadAfterWriteProtocolHandler(erda, store, ring,
                    maxMessageLength);
            default -> throw new IllegalArgumentException("protocol " + protocol + " is not a baseline");
        };
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
        line.accept("redo_pending", redoLog.pendingEntries());
        line.accept("redo_applied", redoLog.appliedEntries());
        line.accept("redo_replayed", redoLog.replayed());
        line.accept("ring_pending", ring.pendingSlots());
        line.accept("ring_applied", ring.appliedSlots());
        line.accept("ring_expired", ring.expiredSlots());
        line.accept("ring_replayed", ring.replayed());
    }

    /** Pauses or resumes the redo applier (tests: writes stay pending). */
    public void pauseRedoApplier(boolean pause) {
        redoLog.pause(pause);
    }

    /** Pauses or resumes the ring poller (tests: slots stay pending). */
    public void pauseRingPoller(boolean pause) {
        ring.pause(pause);
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
