package io.erda.server.store;

import io.erda.core.LogObjects;
import io.erda.core.table.HopscotchTable;
import io.erda.protocol.memory.AtomicWord;
import io.erda.protocol.memory.Key;
import io.erda.protocol.memory.LogAddress;
import io.erda.protocol.memory.ObjectCheck;
import java.lang.foreign.MemorySegment;
import java.util.SequencedCollection;

/**
 * Finding a key's entry and its versions, for the store and its lease settlement (both under the store lock).
 * Entries hold only a fingerprint, so a candidate is the key's entry if its current object is complete with this
 * key, or its current offset is a pending reservation of this key (not written yet), or its previous object is
 * complete with this key.
 */
final class KeyEntries {
    private final HopscotchTable table;
    private final LogObjects objects;
    private final Reservations reservations;

    KeyEntries(HopscotchTable table, LogObjects objects, Reservations reservations) {
        this.table = table;
        this.objects = objects;
        this.reservations = reservations;
    }

    /**
     * The newest complete version of {@code key} other than (and older than) {@code torn}: the word's previous, then
     * the words before each pending flip newest first, then (if {@code scanLog} and the records do not reach back to
     * the key's creation) the head's log. {@code torn} itself is tried first when it is the word's current and
     * {@code scanLog} is false (a GET wants the newest complete version, whichever it is).
     */
    long newestComplete(int head, Key key, long word, long torn, boolean scanLog) {
        MemorySegment k = key.bytes();
        if (!scanLog && objects.isComplete(head, torn, k)) {
            return torn;
        }
        if (objects.isComplete(head, AtomicWord.previous(word), k)) {
            return AtomicWord.previous(word);
        }
        SequencedCollection<Reservation> records = reservations.of(key);
        for (Reservation r : records.reversed()) {
            long before = r.wordBefore();
            for (long candidate : new long[] {AtomicWord.current(before), AtomicWord.previous(before)}) {
                if (candidate != torn && objects.isComplete(head, candidate, k)) {
                    return candidate;
                }
            }
        }
        boolean createdByARecord = !records.isEmpty() && records.getFirst().wordBefore() == 0;
        if (!scanLog || createdByARecord) {
            return AtomicWord.NONE;
        }
        return objects.newestCompleteBefore(head, k, torn);
    }

    int find(Key key) {
        MemorySegment k = key.bytes();
        SequencedCollection<Reservation> pending = reservations.of(key);
        return table.lookup(key.hash(), (position, word, head) -> owns(head, word, k, pending));
    }

    /**
     * The pending reservations are looked at first: they are in memory, while checking the current object reads
     * (and CRCs) it, lines the client just wrote from another core (about a microsecond of a PUT's server work for
     * 1 KiB, and an update usually finds its key's previous reservation still pending). A pending reservation of
     * this key at the candidate's current offset makes it the key's entry whatever lies there: every reservation's
     * offset is unique among live entries of its head (reservations settle before a cleaning retires a chain, so
     * no entry of another chain generation can reuse it), so no other key's entry can point at it.
     */
    private boolean owns(int head, long word, MemorySegment key, SequencedCollection<Reservation> pending) {
        long current = AtomicWord.current(word);
        for (Reservation r : pending.reversed()) { // the newest first: the current word is usually its offset
            if (r.head() == head && LogAddress.unitsForBytes(r.chainOffset()) == current) {
                return true;
            }
        }
        ObjectCheck check = objects.check(head, current, key);
        if (check.isValid()) {
            return true;
        }
        if (check == ObjectCheck.KEY_MISMATCH) {
            return false;
        }
        return objects.isComplete(head, AtomicWord.previous(word), key);
    }
}
