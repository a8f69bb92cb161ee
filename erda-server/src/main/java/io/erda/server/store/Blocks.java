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
 * <p>Every block has the same lease, so grant order is deadline order and a FIFO is the queue: once the expired ones
 * are taken off its front, every block in it is running. A block given back leaves it at once. Not thread-safe: the
 * store's lock guards it.
 */
final class Blocks {
    /**
     * A granted block of {@code head} at {@code chainOffset}, in {@code chain} (the head's write chain at the grant:
     * compared by identity).
     */
    record Block(int head, long chainOffset, long grantedNanos, long deadline, Object chain) {
    }

    private final ArrayDeque<Block> byGrant = new ArrayDeque<>();

    void add(Block block) {
        byGrant.addLast(block);
    }

    /**
     * A client gave back the block of {@code head} at {@code chainOffset}: its lease ends now. False if no such block's
     * lease runs (expired, returned before, or never granted).
     */
    boolean giveBack(int head, long chainOffset, long now) {
        expire(now);
        return byGrant.removeIf(b -> b.head() == head && b.chainOffset() == chainOffset);
    }

    /** Forgets the blocks whose lease ended before {@code now}. */
    void expire(long now) {
        Block first;
        while ((first = byGrant.peekFirst()) != null && now - first.deadline() > 0) {
            byGrant.pollFirst();
        }
    }

    /**
     * The latest deadline of the blocks of {@code head} granted before {@code grantedBeforeNanos} in a chain other than
     * {@code writeChain} (the one a cleaning retires) whose lease has not ended by {@code now}, or {@code now} if there
     * is none. Blocks of the write chain need no wait: their objects are where the head keeps its data.
     */
    long lastDeadline(int head, Object writeChain, long grantedBeforeNanos, long now) {
        expire(now);
        long last = now;
        for (Iterator<Block> it = byGrant.iterator(); it.hasNext(); ) {
            Block b = it.next();
            if (b.grantedNanos() - grantedBeforeNanos >= 0) {
                break; // grant order: every later one was granted after too
            }
            if (b.head() == head && b.chain() != writeChain && b.deadline() - last > 0) {
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
