package io.erda.cleaner;

import io.erda.core.hash.KeyHash;
import io.erda.core.layout.AtomicWord;
import io.erda.core.layout.LogAddress;
import io.erda.core.layout.ObjectFlyweight;
import io.erda.core.log.ChainPosition;
import io.erda.core.log.LogChain;
import io.erda.core.log.LogHead;
import io.erda.core.table.HopscotchTable;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;

/**
 * Moves one head's live versions from its old chain to the new one, entry by entry. Every method
 * runs under the host's lock, so no PUT flips an entry between the check and the store: a copy is
 * recorded only if the version it copies is still current, which keeps per-key version order in
 * the new chain: a copy lands after every older version of its key and before every newer one.
 *
 * <p><b>The atomic word during cleaning</b> (paper §4.4, Figs. 10-13). The tag-selected slot is
 * always the newest version, in whichever chain; offsets are self-describing (slots,
 * {@link LogChain}). The merge and replication copy the current version and record the copy in the
 * other slot without flipping ({@link AtomicWord#withPrevious}); a PUT meanwhile flips as always, so
 * a reader of either kind never needs the cleaning state: current, else previous. The switch flips
 * the tag of every entry whose other slot holds a copy of its current version, and clears any slot
 * still pointing into the old chain once it is not needed as a rollback target.
 */
final class Relocation {
    /** What happened to one scanned object or one entry. */
    enum Outcome { COPIED, ALREADY_COPIED, STALE, REMOVED, FLIPPED, CLEARED, PENDING, UNTOUCHED }

    private final CleaningHost host;
    private final LogHead head;
    private final HopscotchTable table;
    private final ObjectFlyweight scratch = new ObjectFlyweight();
    private final ObjectFlyweight other = new ObjectFlyweight();
    long bytesCopied;
    long objectsCopied;
    long staleSkipped;
    long entriesRemoved;

    Relocation(CleaningHost host, LogHead head, HopscotchTable table) {
        this.host = host;
        this.head = head;
        this.table = table;
    }

    /**
     * Merge/replicate step for a valid object of the old chain at {@code chainOffset}: copied and
     * recorded in the other slot if it is its key's current version; its entry removed if that
     * version is a tombstone; else stale, dropped. Locked.
     */
    Outcome relocateIfCurrent(long chainOffset, ObjectFlyweight object) {
        long units = LogAddress.unitsForBytes(chainOffset);
        int headId = head.headId();
        long hash = KeyHash.hash(object.key().toArray(ValueLayout.JAVA_BYTE));
        int position = table.lookup(hash, (p, word, h) -> h == headId && AtomicWord.current(word) == units);
        if (position < 0) {
            staleSkipped++;
            return Outcome.STALE;
        }
        if (object.isTombstone()) {
            table.remove(position); // paper §4.4: deleted objects are removed
            entriesRemoved++;
            return Outcome.REMOVED;
        }
        long word = table.atomicWord(position);
        if (isCopy(AtomicWord.previous(word), units)) {
            return Outcome.ALREADY_COPIED;
        }
        long copy = copyToNewChain(units, object.totalLength());
        table.updateAtomicWord(position, AtomicWord.withPrevious(word, copy));
        return Outcome.COPIED;
    }

    /**
     * Switch step for an entry of the head: afterwards it references {@code old} no more, unless
     * {@link Outcome#PENDING} (a version it needs is still being written; retry once settled). Locked.
     */
    Outcome detachFromOldChain(int position, long word, LogChain old) {
        long current = AtomicWord.current(word);
        long previous = AtomicWord.previous(word);
        boolean currentOld = inChain(old, current);
        boolean previousOld = inChain(old, previous);
        if (currentOld) {
            long length = validLength(current);
            if (length < 0) {
                return Outcome.PENDING;
            }
            if (scratch.isTombstone()) {
                table.remove(position);
                entriesRemoved++;
                return Outcome.REMOVED;
            }
            long recorded = isCopy(previous, current) ? word : AtomicWord.withPrevious(word, copyToNewChain(current, length));
            // paper §4.4 Fig. 13: the flip makes the copy current; the old version is not kept as previous
            table.updateAtomicWord(position, AtomicWord.withPrevious(AtomicWord.withTagFlipped(recorded), AtomicWord.NONE));
            return Outcome.FLIPPED;
        }
        if (previousOld) {
            if (current != AtomicWord.NONE && validLength(current) < 0) {
                // the old previous version is this entry's rollback target ([last-complete-version])
                return Outcome.PENDING;
            }
            table.updateAtomicWord(position, AtomicWord.withPrevious(word, AtomicWord.NONE));
            return Outcome.CLEARED;
        }
        return Outcome.UNTOUCHED;
    }

    /** Whether the word references {@code chain} at all. */
    static boolean references(long word, LogChain chain) {
        return inChain(chain, AtomicWord.current(word)) || inChain(chain, AtomicWord.previous(word));
    }

    private static boolean inChain(LogChain chain, long units) {
        return units != AtomicWord.NONE && chain.contains(LogAddress.bytesForUnits(units));
    }

    /** Padded length of the valid object at {@code units} (left wrapped in {@link #scratch}), or -1. */
    private long validLength(long units) {
        long offset = LogAddress.bytesForUnits(units);
        if (!head.isMapped(offset, 0)) {
            return -1;
        }
        ChainPosition at = head.resolve(offset);
        MemorySegment data = at.region().data();
        if (!scratch.wrap(data, at.offsetInRegion()).validate(data.byteSize() - at.offsetInRegion(), null).isValid()) {
            return -1;
        }
        return scratch.totalLength();
    }

    /** Whether {@code candidate} lies in the new chain and holds the same bytes as the valid object at {@code original}. */
    private boolean isCopy(long candidate, long original) {
        LogChain next = head.newChain() != null ? head.newChain() : head.currentChain();
        if (!inChain(next, candidate) || inChain(next, original)) {
            return false;
        }
        long length = validLength(original);
        if (length < 0) {
            return false;
        }
        ChainPosition at = head.resolve(LogAddress.bytesForUnits(candidate));
        MemorySegment data = at.region().data();
        if (!other.wrap(data, at.offsetInRegion()).validate(data.byteSize() - at.offsetInRegion(), null).isValid()
                || other.totalLength() != length) {
            return false;
        }
        ChainPosition from = head.resolve(LogAddress.bytesForUnits(original));
        return MemorySegment.mismatch(from.region().data(), from.offsetInRegion(), from.offsetInRegion() + length,
                data, at.offsetInRegion(), at.offsetInRegion() + length) == -1;
    }

    /**
     * Copies the object at {@code units} to the chain receiving cleaner copies (the new chain; after
     * the switch, the head's chain), persisted before returning its offset in units.
     */
    private long copyToNewChain(long units, long length) {
        int regionsBefore = head.regionCount();
        long target = head.newChain() != null ? head.reserveInNewChain(length) : head.reserve(length);
        if (head.regionCount() != regionsBefore) {
            host.regionsAdded(head.headId());
        }
        ChainPosition from = head.resolve(LogAddress.bytesForUnits(units));
        ChainPosition to = head.resolve(target);
        to.region().write(to.offsetInRegion(), from.region().data().asSlice(from.offsetInRegion(), length));
        to.region().persist(to.offsetInRegion(), length); // the copy is durable before any entry points at it
        bytesCopied += length;
        objectsCopied++;
        host.bytesCopied(length);
        return LogAddress.unitsForBytes(target);
    }
}
