package io.erda.server;

import java.util.concurrent.atomic.LongAdder;

/** Counters of a running server; read as "name=value" lines by STATS. */
final class StoreStats {
    final LongAdder puts = new LongAdder();
    final LongAdder deletes = new LongAdder();
    final LongAdder getsTwoSided = new LongAdder();
    final LongAdder flushes = new LongAdder();
    final LongAdder rollbacks = new LongAdder();
    final LongAdder removedEntries = new LongAdder();
    final LongAdder repairHints = new LongAdder();
    final LongAdder errors = new LongAdder();
    /** Object bytes handed out by reservations: the NVM-bytes figure where the fabric cannot count remote writes. */
    final LongAdder bytesReserved = new LongAdder();
    /** CPU time of server threads while handling requests, connections and leases (idle waiting excluded). */
    final LongAdder serverCpuNanos = new LongAdder();
}
