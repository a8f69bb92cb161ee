package io.erda.server.store;

import io.erda.core.LogObjects;
import io.erda.core.PmDirectory;
import io.erda.core.table.HopscotchTable;
import io.erda.protocol.memory.AtomicWord;
import io.erda.protocol.memory.Key;
import io.erda.protocol.memory.KeyHash;
import io.erda.protocol.memory.LogAddress;
import io.erda.protocol.memory.ObjectFlyweight;
import java.lang.foreign.MemorySegment;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * Restart recovery (docs/ARCHITECTURE.md, [recovery]). The tails come back from the high-water marks when the directory
 * opens, and the table repairs its own half-done moves; what is left is the leases that were pending at the crash:
 * every entry whose current object is incomplete is rolled back to its newest complete version (the previous slot if it
 * validates, else the newest complete object of that key in the head's log before it), or removed if the key never had
 * a complete version.
 *
 * <p>An entry holds only a fingerprint, so when both its slots are torn the key is found by scanning the head's log
 * for complete objects whose key has the entry's fingerprint and head and no entry of its own.
 */
public final class Recovery {
    /** What recovery did. */
    public record Summary(long entries, long rolledBack, long removed) {
        @Override
        public String toString() {
            return "recovery: " + entries + " entries, " + rolledBack + " rolled back, " + removed + " removed";
        }
    }

    private record Entry(int position, long word, int fingerprint, int head) {
    }

    private final PmDirectory directory;
    private final HopscotchTable table;
    private final LogObjects objects;

    Recovery(PmDirectory directory) {
        this.directory = directory;
        this.table = directory.table();
        this.objects = new LogObjects(directory);
    }

    Summary run() {
        List<Entry> entries = new ArrayList<>();
        table.forEach((position, word, fingerprint, head) -> entries.add(new Entry(position, word, fingerprint, head)));
        long rolledBack = 0;
        long removed = 0;
        for (Entry e : entries) {
            switch (repair(e)) {
                case ROLLED_BACK -> rolledBack++;
                case REMOVED -> removed++;
                case COMPLETE -> { }
            }
        }
        return new Summary(entries.size(), rolledBack, removed);
    }

    private enum Repair { COMPLETE, ROLLED_BACK, REMOVED }

    /**
     * Rolls the entry back to its newest complete version, or removes it, by CAS from the word decided on; a lost CAS
     * (a writer changed the word meanwhile) decides again from the word it left.
     */
    private Repair repair(Entry e) {
        for (long word = e.word(); ; word = table.atomicWord(e.position())) {
            long current = AtomicWord.current(word);
            if (ownsCompleteObject(e, current)) {
                return Repair.COMPLETE;
            }
            long target = ownsCompleteObject(e, AtomicWord.previous(word)) ? AtomicWord.previous(word)
                    : newestOrphanVersion(e, current);
            if (target == AtomicWord.NONE) {
                if (table.remove(e.position(), word)) {
                    return Repair.REMOVED;
                }
            } else if (table.compareAndSetAtomicWord(e.position(), word, AtomicWord.withCurrent(word, target))) {
                return Repair.ROLLED_BACK;
            }
        }
    }

    /** Whether the object at {@code units} is complete and its key is one this entry can belong to. */
    private boolean ownsCompleteObject(Entry e, long units) {
        ObjectFlyweight object = new ObjectFlyweight();
        return objects.wrap(e.head(), units, object, null).isValid() && belongs(object.key(), e);
    }

    private boolean belongs(MemorySegment key, Entry e) {
        long hash = KeyHash.hash(key.toArray(java.lang.foreign.ValueLayout.JAVA_BYTE));
        return KeyHash.fingerprint(hash) == e.fingerprint()
                && KeyHash.headId(hash, directory.heads().size()) == e.head();
    }

    /**
     * Newest complete version before {@code torn} of a key that belongs to the entry and has no other entry in the
     * table; NONE if there is none.
     */
    private long newestOrphanVersion(Entry e, long torn) {
        Map<Key, Long> newest = new HashMap<>();
        long limit = LogAddress.bytesForUnits(torn == AtomicWord.NONE ? AtomicWord.MAX_OFFSET : torn);
        io.erda.core.log.LogHead head = directory.head(e.head());
        long limitOrder = head.logOrder(limit); // chains may sit at any slots: compare log order, not offsets
        objects.scan(e.head(), object -> belongs(object.key(), e), (chainOffset, object) -> {
            if (head.logOrder(chainOffset) < limitOrder) {
                newest.put(Key.copyOf(object.key()), LogAddress.unitsForBytes(chainOffset));
            }
        });
        long best = AtomicWord.NONE;
        for (Map.Entry<Key, Long> candidate : newest.entrySet()) {
            boolean newer = best == AtomicWord.NONE || head.logOrder(LogAddress.bytesForUnits(candidate.getValue()))
                    > head.logOrder(LogAddress.bytesForUnits(best));
            if (newer && !hasOtherEntry(candidate.getKey(), e.position())) {
                best = candidate.getValue();
            }
        }
        return best;
    }

    private boolean hasOtherEntry(Key key, int position) {
        MemorySegment k = key.bytes();
        int found = table.lookup(key.hash(), (p, word, head) -> p != position
                && (objects.isComplete(head, AtomicWord.current(word), k)
                || objects.isComplete(head, AtomicWord.previous(word), k)));
        return found >= 0;
    }
}
