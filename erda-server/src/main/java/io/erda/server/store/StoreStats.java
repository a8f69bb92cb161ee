package io.erda.server.store;

import io.erda.protocol.MessageType;
import java.util.List;
import java.util.concurrent.atomic.LongAdder;

/** Counters of a running server; read as "name=value" lines by STATS. */
public final class StoreStats {
    public final LongAdder puts = new LongAdder();
    public final LongAdder deletes = new LongAdder();
    public final LongAdder getsTwoSided = new LongAdder();
    public final LongAdder flushes = new LongAdder();
    public final LongAdder rollbacks = new LongAdder();
    public final LongAdder removedEntries = new LongAdder();
    public final LongAdder repairHints = new LongAdder();
    public final LongAdder errors = new LongAdder();
    /** Object bytes handed out by reservations: the NVM-bytes figure where the fabric cannot count remote writes. */
    public final LongAdder bytesReserved = new LongAdder();
    /** Log blocks granted for one-sided updates (their bytes are in {@link #bytesReserved}). */
    public final LongAdder blocksGranted = new LongAdder();
    /** Blocks their clients gave back before the lease ended. */
    public final LongAdder blocksReturned = new LongAdder();
    /** CPU time of server threads while handling requests, connections and leases (idle waiting excluded). */
    public final LongAdder serverCpuNanos = new LongAdder();
    /** Requests served on the fabric provider's thread because every worker was parked (tcp; Workers). */
    public final LongAdder requestsServedDirectly = new LongAdder();
    /** Log regions registered with the fabric while they were made ahead, before a chain needed them. */
    public final LongAdder regionsRegisteredAhead = new LongAdder();
    /** Log regions registered when a chain grew into them (under the store lock, in the PUT that needed them). */
    public final LongAdder regionsRegisteredAtGrowth = new LongAdder();
    /** Cleaning runs the log cleaner finished (background and admin). */
    public final LongAdder cleanings = new LongAdder();
    /** CPU time of the background cleaner thread's runs; also part of {@link #serverCpuNanos}. */
    public final LongAdder cleanerCpuNanos = new LongAdder();
    /** Bytes of live objects the cleaner copied into new chains (and persisted). */
    public final LongAdder cleanerBytesCopied = new LongAdder();
    /**
     * Requests received, by type, whatever became of them (STATS {@code requests_put}, ...): what a window of the
     * counters served, and so what its server CPU was spent on (HELLO and HEADS are counted nowhere else).
     */
    private final LongAdder[] requests = new LongAdder[MessageType.values().length];

    /** The request types of the protocols: those that have a reply type. */
    public static final List<MessageType> REQUEST_TYPES = java.util.Arrays.stream(MessageType.values())
            .filter(t -> (t.code() & 1) == 1 && MessageType.of(t.code() + 1) != null).toList();

    public StoreStats() {
        for (MessageType t : REQUEST_TYPES) {
            requests[t.ordinal()] = new LongAdder();
        }
    }

    /** A message of {@code type} was received (a type that is not a request is not counted here). */
    public void received(MessageType type) {
        LongAdder count = requests[type.ordinal()];
        if (count != null) {
            count.increment();
        }
    }

    /** Requests of {@code type} received so far. */
    public long requests(MessageType type) {
        LongAdder count = requests[type.ordinal()];
        return count == null ? 0 : count.sum();
    }
}
