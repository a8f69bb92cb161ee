package io.erda.server.store;

import java.util.ArrayDeque;
import java.util.Iterator;

/**
 * The log blocks a server in one-sided mode has granted and whose leases still run (docs/one-sided-put.md). A block
 * is a range of a head's write chain reserved at its tail, as a reservation is, so its bytes belong to the log from
 * the grant on: the high-water mark that {@code LogHead.reserve} persists is the grant's durable record, and after a
 * crash every lease is void anyway. What is kept here is what the cleaner needs: a cleaning must not switch a head
 * while a block granted before its redirect may still be written and published by CAS, so it waits out the lease
 * of each ({@link #lastDeadline}).
 *
 * <p>Every block has the same lease, so grant order is deadline order and a FIFO is the queue. Not thread-safe: the
 * store's lock guards it.
 */
final class Blocks {
    /** A granted block: {@code [chainOffset, chainOffset + length)} of {@code head}. */
    record Block(int head, long chainOffset, int length, long grantedNanos, long deadline) {
    }

    private final ArrayDeque<Block> byGrant = new ArrayDeque<>();

    void add(Block block) {
        byGrant.addLast(block);
    }

    /** Forgets the blocks whose lease ended before {@code now}. */
    void expire(long now) {
        Block first;
        while ((first = byGrant.peekFirst()) != null && now - first.deadline() > 0) {
            byGrant.pollFirst();
        }
    }

    /**
     * The latest deadline of the blocks of {@code head} granted before {@code grantedBeforeNanos} whose lease has not
     * ended by {@code now}, or {@code now} if there is none.
     */
    long lastDeadline(int head, long grantedBeforeNanos, long now) {
        expire(now);
        long last = now;
        for (Iterator<Block> it = byGrant.iterator(); it.hasNext(); ) {
            Block b = it.next();
            if (b.grantedNanos() - grantedBeforeNanos >= 0) {
                break; // grant order: every later one was granted after too
            }
            if (b.head() == head && b.deadline() - last > 0) {
                last = b.deadline();
            }
        }
        return last;
    }

    /** Blocks whose lease may still run. */
    int live(long now) {
        expire(now);
        return byGrant.size();
    }
}
