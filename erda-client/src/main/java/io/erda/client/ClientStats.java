package io.erda.client;

import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.atomic.LongAdder;

/** What a client did, counted across its connections (thread-safe, cheap on the hot path). */
public final class ClientStats {
    final LongAdder gets = new LongAdder();
    final LongAdder puts = new LongAdder();
    final LongAdder deletes = new LongAdder();
    /** One-sided READs: windows, stripe versions, objects. */
    final LongAdder oneSidedReads = new LongAdder();
    /** Objects READ in two parts because the first guess at their length was short. */
    final LongAdder objectTailReads = new LongAdder();
    /** Reads of the previous version after the current one was incomplete (paper §4.2). */
    final LongAdder previousVersionReads = new LongAdder();
    /** Rounds of a GET that found neither version complete, or a miss it could not confirm, and waited. */
    final LongAdder getRetries = new LongAdder();
    /** Misses confirmed through the stripe-version protocol (docs/ARCHITECTURE.md, [moves-vs-readers]). */
    final LongAdder missConfirmations = new LongAdder();
    /** GETs answered by the server two-sided after the one-sided budget ran out. */
    final LongAdder twoSidedGets = new LongAdder();
    /** PUTs that outlived their lease and re-read the entry ([leases]). */
    final LongAdder leaseConfirmations = new LongAdder();
    /** PUTs sent again because the lease confirmation found their object no longer current. */
    final LongAdder putRetries = new LongAdder();
    /** Connections replaced after a fabric error. */
    final LongAdder reconnects = new LongAdder();
    /** One-sided mode: updates published by the client's own CAS (one_sided_updates). */
    final LongAdder oneSidedUpdates = new LongAdder();
    /** One-sided mode: CASes lost to another writer or the server, each followed by a retry (cas_retries). */
    final LongAdder casRetries = new LongAdder();
    /**
     * One-sided mode: objects written again into another block because the block of their first WRITE could no longer
     * be published from (its lease ended, or its head's state changed, before their CAS) (objects_rewritten).
     */
    final LongAdder objectsRewritten = new LongAdder();
    /** One-sided mode: log blocks leased (blocks_leased). */
    final LongAdder blocksLeased = new LongAdder();
    /** One-sided mode: blocks given back because their head's state changed (blocks_returned). */
    final LongAdder blocksReturned = new LongAdder();
    /** One-sided mode: entries located by READs because the connection had none cached (entry_lookups). */
    final LongAdder entryLookups = new LongAdder();
    /** Connections this client opened: at most its pool size, plus one per reconnect. */
    final LongAdder connectionsOpened = new LongAdder();
    /** HEADS refreshes (a region not in the cached head array). */
    final LongAdder headRefreshes = new LongAdder();
    /** HEAD_STATE notifications processed (paper §4.4: a head started or stopped being cleaned). */
    final LongAdder headStates = new LongAdder();

    /** A snapshot, names as in the field comments. */
    public Map<String, Long> snapshot() {
        Map<String, Long> m = new LinkedHashMap<>();
        m.put("gets", gets.sum());
        m.put("puts", puts.sum());
        m.put("deletes", deletes.sum());
        m.put("one_sided_reads", oneSidedReads.sum());
        m.put("object_tail_reads", objectTailReads.sum());
        m.put("previous_version_reads", previousVersionReads.sum());
        m.put("get_retries", getRetries.sum());
        m.put("miss_confirmations", missConfirmations.sum());
        m.put("two_sided_gets", twoSidedGets.sum());
        m.put("lease_confirmations", leaseConfirmations.sum());
        m.put("put_retries", putRetries.sum());
        m.put("reconnects", reconnects.sum());
        m.put("one_sided_updates", oneSidedUpdates.sum());
        m.put("cas_retries", casRetries.sum());
        m.put("objects_rewritten", objectsRewritten.sum());
        m.put("blocks_leased", blocksLeased.sum());
        m.put("blocks_returned", blocksReturned.sum());
        m.put("entry_lookups", entryLookups.sum());
        m.put("connections_opened", connectionsOpened.sum());
        m.put("head_refreshes", headRefreshes.sum());
        m.put("head_states", headStates.sum());
        return m;
    }

    public long get(String name) {
        Long v = snapshot().get(name);
        if (v == null) {
            throw new IllegalArgumentException("no client statistic named " + name + "; known: " + snapshot().keySet());
        }
        return v;
    }

    @Override
    public String toString() {
        return snapshot().toString();
    }
}
