package io.erda.server.baseline;

import io.erda.core.pm.PmFileHeader;
import io.erda.core.pm.PmFormatException;
import io.erda.core.pm.PmRegion;
import io.erda.core.pm.WriteLatencyModel;
import io.erda.fabric.Access;
import io.erda.fabric.Fabric;
import io.erda.fabric.IdleStrategy;
import io.erda.fabric.MemoryRegion;
import io.erda.protocol.MessageHeader;
import io.erda.protocol.MessageType;
import io.erda.protocol.RedoPutRequest;
import io.erda.protocol.WireFormatException;
import io.erda.protocol.memory.Key;
import io.erda.protocol.memory.ObjectLayout;
import io.erda.server.request.ServerConnection;
import io.erda.server.request.ErdaProtocolHandler;
import io.erda.server.request.ReceiveBuffers;
import io.erda.server.request.Request;
import io.erda.server.store.Store;
import io.erda.server.store.StoreStats;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.EnumSet;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.logging.Logger;

/**
 * The PM redo log of the Redo Logging baseline (paper §5.1): the receive buffers of redo-log connections live in
 * a PM file (the taxonomy's PM-RQWRB), so a client's REDO_PUT SEND lands in PM and that receive buffer <em>is</em>
 * the redo entry. The file is cut into {@link #LANES} lanes of {@link #BUFFERS_PER_LANE} buffers of
 * {@link #BUFFER_SIZE} bytes; a connection takes a lane for its life.
 *
 * <p><b>PUT.</b> {@link #accept}: the body's CRC32C is checked, the placement is counted (the fabric does not count
 * RECV placement) and the PM model charged, the server stamps its acceptance sequence into the entry, persists the
 * entry, and then the PUT may be acknowledged: <em>durable = the redo entry is persistent</em>. The receive buffer
 * stays retained (not posted again) until the applier has copied the pair into the destination {@link Store}.
 *
 * <p><b>Applier.</b> One thread applies entries in sequence order ({@link Store#apply}: the second NVM write), then
 * persists the applied-through sequence in the file header, and only then posts the buffers again. Between entries
 * it spins and yields ({@link #APPLIER_YIELD_NANOS}) before it parks, as the server's workers do: a parked applier
 * made each PUT that found it so pay the unpark on the worker's path and the applier's wake-up beside it. So after a
 * crash every entry with a sequence above the persisted mark and a valid CRC is acknowledged-but-maybe-unapplied,
 * and {@link #open} replays exactly those, in sequence order (replaying an applied one again is harmless: same
 * value, and anything newer of the key is replayed after it).
 *
 * <p><b>GET.</b> {@link #lookup} answers from the newest not-yet-applied entry of the key, else the caller asks
 * the table. An entry leaves the pending index only after it is applied, and its buffer is reposted only after
 * that, so a GET sees a PUT whether or not it has been applied yet.
 *
 * <p><b>Bounded.</b> A client has one request outstanding per connection; if the applier falls
 * {@link #BUFFERS_PER_LANE} entries behind on a connection, that connection has no posted receive and its next
 * SEND waits in RNR (the baseline clients use an RNR timeout as long as their operation timeout, like verbs'
 * rnr_retry = 7).
 */
public final class RedoLog extends AppliedLog {
    public static final String FILE = "redo-log.pm";
    /** PM file kind. */
    public static final int KIND = io.erda.core.pm.PmFileHeader.KIND_REDO_LOG;
    /**
     * The kind redo logs were created with before they had their own: the same as heads.pm's. Still opened, so that
     * an existing store keeps what its redo log holds; any other kind is refused.
     */
    public static final int LEGACY_KIND = io.erda.core.pm.PmFileHeader.KIND_HEAD_RECORDS;
    public static final int LANES = 32;
    public static final int BUFFERS_PER_LANE = 16;
    public static final int BUFFER_SIZE = 128 << 10;
    /** Largest value with a 1-byte key: a REDO_PUT must fit one receive buffer. */
    static final int MAX_VALUE_LENGTH = BUFFER_SIZE - MessageHeader.LENGTH - RedoPutRequest.KEY_OFFSET - 1;
    private static final Format FORMAT = new Format(KIND, new long[] {LANES, BUFFERS_PER_LANE, BUFFER_SIZE},
            new String[] {"redo lanes", "redo buffers per lane", "redo buffer size"},
            (long) LANES * BUFFERS_PER_LANE * BUFFER_SIZE, "redo log data length", RedoLog::openExisting);
    private static final int APPLIED_SLOT = 0;
    private static final int MAX_BATCH = 64;
    /**
     * How long the applier yields for its next entry before it parks (after a 1 µs spin): a parked applier is unparked
     * by the worker that accepted the next PUT, before its reply, and the two then share a core, so PUT latency
     * depended on whether the applier happened to keep up (docs/MEASUREMENTS.md, "Idle strategies"). The same window
     * as the server workers' (EmulatedCompletionQueue).
     */
    static final long APPLIER_YIELD_NANOS = 200_000;
    static final long APPLIER_SPIN_NANOS = 1_000;
    private static final Logger LOG = Logger.getLogger(RedoLog.class.getName());
    private static final ThreadMXBean CPU = ManagementFactory.getThreadMXBean();

    /** How the applier waits for its next entry before it blocks on the queue. */
    private static final IdleStrategy.Policy IDLE =
            IdleStrategy.Policy.spinYieldThenBlock("redo-log-applier", APPLIER_SPIN_NANOS, APPLIER_YIELD_NANOS);

    /** An accepted, not yet applied entry: slices of its PM receive buffer. */
    private record Entry(long sequence, Lane lane, ServerConnection connection, int slot, Key key, MemorySegment keyBytes,
                         MemorySegment value, boolean delete) {
    }

    private final Lane[] lanes = new Lane[LANES];
    private final Map<Key, Entry> pending = new HashMap<>();
    private final BlockingQueue<Entry> queue = new LinkedBlockingQueue<>();
    private long nextSequence;

    private RedoLog(PmRegion file, Fabric fabric, Store store, StoreStats stats) {
        super(file, store, stats, LOG);
        opened(replay(), fabric.register(file.data(), registerOptions(EnumSet.of(Access.LOCAL_WRITE))));
        for (int i = 0; i < LANES; i++) {
            lanes[i] = new Lane(i);
        }
    }

    private static PmRegion openExisting(Path path, WriteLatencyModel latency) {
        try {
            return PmRegion.open(path, KIND, latency);
        } catch (PmFormatException notThisKind) {
            try {
                return PmRegion.open(path, LEGACY_KIND, latency);
            } catch (PmFormatException notLegacyEither) {
                throw notThisKind;
            }
        }
    }

    /** Opens the store's redo log (creating it the first time) and replays what was acknowledged but not applied. */
    static RedoLog open(Path directory, WriteLatencyModel latency, Fabric fabric, Store store, StoreStats stats) {
        return open(directory.resolve(FILE), FORMAT, latency, file -> new RedoLog(file, fabric, store, stats));
    }

    private long replay() {
        long mark = file.mutableWord(APPLIED_SLOT);
        record Found(long sequence, RedoPutRequest put) { }
        List<Found> found = new ArrayList<>();
        MemorySegment data = file.data();
        for (long offset = 0; offset < data.byteSize(); offset += BUFFER_SIZE) {
            try {
                if (MessageHeader.check(data, offset, BUFFER_SIZE) != MessageType.REDO_PUT) {
                    continue;
                }
                RedoPutRequest put = RedoPutRequest.decode(data, offset + MessageHeader.LENGTH,
                        MessageHeader.bodyLength(data, offset), ObjectLayout.MAX_KEY_LENGTH, BUFFER_SIZE);
                if (put.sequence() > mark) {
                    found.add(new Found(put.sequence(), put));
                }
            } catch (WireFormatException notAnEntry) {
                // never written, torn, or never acknowledged (a SEND placed but not stamped has sequence 0)
            }
        }
        found.sort(Comparator.comparingLong(Found::sequence));
        long last = mark;
        for (Found f : found) {
            store.apply(f.put().key(), f.put().value(), f.put().delete());
            last = f.sequence();
        }
        if (last != mark) {
            file.setMutableWord(APPLIED_SLOT, last);
        }
        nextSequence = last;
        return found.size();
    }

    /** A free lane for a new redo-log connection (one whose entries are all applied). */
    synchronized Lane takeLane() {
        for (Lane lane : lanes) {
            if (!lane.inUse && lane.outstanding == 0) {
                lane.inUse = true;
                return lane;
            }
        }
        throw new IllegalStateException("redo log has no free lane: all " + LANES + " are in use or draining");
    }

    /**
     * Checks, counts, stamps and persists the REDO_PUT in receive slot {@code request.slot()} of
     * {@code connection}, whose receive buffers are {@code lane}; after this returns the PUT is durable.
     */
    void accept(ServerConnection connection, Lane lane, Request request) {
        MemorySegment message = request.message();
        long body = Request.BODY_OFFSET;
        ErdaProtocolHandler.requireKeyLength(message, body + RedoPutRequest.KEY_LENGTH_OFFSET, request.bodyLength(),
                RedoPutRequest.KEY_OFFSET);
        RedoPutRequest put = RedoPutRequest.decode(message, body, request.bodyLength(), ObjectLayout.MAX_KEY_LENGTH,
                BUFFER_SIZE);
        store.requireAppliable(put.key().byteSize(), put.value().byteSize());
        long bufferOffset = lane.offset(request.slot());
        long placed = MessageHeader.LENGTH + (long) request.bodyLength();
        // the SEND placed these bytes in PM: the fabric counts only one-sided writes, so the redo log counts them
        file.recordWrite(bufferOffset, placed);
        long stamp = bufferOffset + body + RedoPutRequest.SEQUENCE_OFFSET;
        synchronized (this) {
            long sequence = ++nextSequence;
            file.setLongRelease(stamp, sequence);
            Entry entry = new Entry(sequence, lane, connection, request.slot(), Key.copyOf(put.key()), put.key(),
                    put.value(), put.delete());
            connection.retain(request.slot());
            lane.outstanding++;
            pending.put(entry.key(), entry);
            queue.add(entry);
        }
        file.persist(bufferOffset, placed);
    }

    /** The newest unapplied entry of {@code key}: its value, null if it is a delete, or NONE. */
    @Override
    synchronized PendingWrite lookup(MemorySegment key) {
        Entry e = pending.get(Key.copyOf(key));
        if (e == null) {
            return PendingWrite.NONE;
        }
        return new PendingWrite(true, e.delete() ? null : e.value().toArray(ValueLayout.JAVA_BYTE));
    }

    /** The applier thread's body. */
    @Override
    void run() {
        List<Entry> batch = new ArrayList<>();
        IdleStrategy backoff = IDLE.newStrategy();
        while (running) {
            Entry first;
            try {
                first = next(backoff);
                if (first == null) {
                    continue;
                }
            } catch (InterruptedException e) {
                return;
            }
            if (!running) {
                return; // what is left is replayed at the next open, as after a crash
            }
            long start = CPU.getCurrentThreadCpuTime();
            batch.add(first);
            queue.drainTo(batch, MAX_BATCH - 1);
            for (Entry e : batch) {
                apply(e.keyBytes(), e.value(), e.delete(), () -> "redo entry " + e.sequence());
            }
            file.setMutableWord(APPLIED_SLOT, batch.getLast().sequence());
            synchronized (this) {
                for (Entry e : batch) {
                    pending.remove(e.key(), e);
                    e.lane().outstanding--;
                }
            }
            for (Entry e : batch) {
                e.connection().release(e.slot());
            }
            applied.add(batch.size());
            batch.clear();
            stats.serverCpuNanos.add(CPU.getCurrentThreadCpuTime() - start);
        }
    }

    /** The next accepted entry: spins and yields for it first, then parks (at most 500 ms; null then). */
    private Entry next(IdleStrategy backoff) throws InterruptedException {
        backoff.reset();
        Entry first;
        while ((first = queue.poll()) == null) {
            if (!running || backoff.idle()) {
                return queue.poll(500, TimeUnit.MILLISECONDS);
            }
        }
        return first;
    }

    /** Entries accepted and not yet applied. */
    @Override
    synchronized int pending() {
        return pending.size();
    }

    /** One connection's receive buffers: {@link #BUFFERS_PER_LANE} consecutive buffers of the redo log. */
    final class Lane implements ReceiveBuffers {
        private final int index;
        private boolean inUse;
        private int outstanding;

        private Lane(int index) {
            this.index = index;
        }

        @Override
        public MemoryRegion region() {
            return registration();
        }

        @Override
        public int count() {
            return BUFFERS_PER_LANE;
        }

        @Override
        public int size() {
            return BUFFER_SIZE;
        }

        @Override
        public long offset(int slot) {
            return ((long) index * BUFFERS_PER_LANE + slot) * BUFFER_SIZE;
        }

        /** The connection is gone; the lane is free again once its entries are applied. */
        @Override
        public void close() {
            synchronized (RedoLog.this) {
                inUse = false;
            }
        }
    }
}
