package io.erda.server.store;

import io.erda.protocol.memory.Key;

/**
 * A pending reservation: a lease on {@code [chainOffset, chainOffset+length)} of a head, granted to one client for
 * one key (docs/ARCHITECTURE.md, [leases]).
 *
 * <p>Not a record for one mutable bit, {@link #isNewest}: whether this is still its key's newest pending record.
 * It turns false, once and for good, when a newer reservation of the key is recorded or the key's records are
 * dropped ({@link Reservations}), and it is read and written under the store lock only. The lease validator takes
 * every record off the deadline queue and settles only the newest ones; with the bit it tells them from the
 * superseded ones without looking the key up in the per-key maps, a cache miss or three for a record a lease old
 * (timed: with the lookups a hold of the store lock that takes records off the queue lasted about 120 µs on average,
 * with the bit about 20 µs; a PUT that comes meanwhile waits for it).
 */
final class Reservation {
    private final Key key;
    private final int head;
    private final long chainOffset;
    private final int length;
    private final long deadline;
    private final long wordBefore;
    /** Guarded by the store lock; see the class comment. */
    private boolean newest = true;

    /**
     * @param key        the key the object must carry
     * @param head       head id
     * @param chainOffset chain byte offset of the object
     * @param length     padded object length
     * @param deadline   {@link System#nanoTime()} after which the validator may check the object
     * @param wordBefore the entry's atomic word before this reservation's flip (0 for a new entry): the way back to
     *                   older versions when both slots of the current word are torn ([last-complete-version])
     */
    Reservation(Key key, int head, long chainOffset, int length, long deadline, long wordBefore) {
        this.key = key;
        this.head = head;
        this.chainOffset = chainOffset;
        this.length = length;
        this.deadline = deadline;
        this.wordBefore = wordBefore;
    }

    Key key() {
        return key;
    }

    int head() {
        return head;
    }

    long chainOffset() {
        return chainOffset;
    }

    int length() {
        return length;
    }

    long deadline() {
        return deadline;
    }

    long wordBefore() {
        return wordBefore;
    }

    boolean expired(long now) {
        return now - deadline >= 0;
    }

    /** Whether this is still its key's newest pending record (under the store lock). */
    boolean isNewest() {
        return newest;
    }

    /** A newer record of the key was recorded, or the key's records were dropped (under the store lock). */
    void superseded() {
        newest = false;
    }

    @Override
    public String toString() {
        return "Reservation[" + key + ", head " + head + ", chain offset " + chainOffset + ", " + length
                + " bytes, deadline " + deadline + ", word before 0x" + Long.toHexString(wordBefore)
                + (newest ? "" : ", superseded") + "]";
    }
}
