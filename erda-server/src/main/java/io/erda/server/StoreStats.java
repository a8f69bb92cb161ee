package io.erda.server;

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
    /** CPU time of server threads while handling requests, connections and leases (idle waiting excluded). */
    public final LongAdder serverCpuNanos = new LongAdder();
    /** Requests served on the fabric provider's thread because every worker was parked (tcp; RequestServer). */
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
}
