package io.erda.server;

import io.erda.core.hash.Key;
/**
 * A pending reservation: a lease on {@code [chainOffset, chainOffset+length)} of a head, granted to one client for
 * one key (docs/ARCHITECTURE.md, [leases]).
 *
 * @param key        the key the object must carry
 * @param head       head id
 * @param chainOffset chain byte offset of the object
 * @param length     padded object length
 * @param deadline   {@link System#nanoTime()} after which the validator may check the object
 * @param wordBefore the entry's atomic word before this reservation's flip (0 for a new entry): the way back to
 *                   older versions when both slots of the current word are torn ([last-complete-version])
 */
record Reservation(Key key, int head, long chainOffset, int length, long deadline, long wordBefore) {
    boolean expired(long now) {
        return now - deadline >= 0;
    }
}
