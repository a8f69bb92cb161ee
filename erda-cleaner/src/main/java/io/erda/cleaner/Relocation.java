package io.erda.cleaner;

import io.erda.core.log.ChainPosition;
import io.erda.core.log.LogChain;
import io.erda.core.log.LogHead;
import io.erda.core.table.HopscotchTable;
import io.erda.protocol.memory.AtomicWord;
import io.erda.protocol.memory.KeyHash;
import io.erda.protocol.memory.LogAddress;
import io.erda.protocol.memory.ObjectFlyweight;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;

/**
 * Moves one head's live versions from its old chain to the new one, entry by entry. Every method runs under the
 * host's lock but {@link #write}: a copy's space is reserved while the version it copies is current ({@link #plan}),
 * which keeps per-key version order in the new chain (every newer version of the key is reserved after it, as a PUT
 * reserves and flips in one hold), the bytes are copied and persisted without the lock, and the copy is recorded
 * only if that version is still current then ({@link #record}); a PUT that flipped the entry meanwhile leaves the
 * copy unreferenced, a stale object like any superseded version. Copying under the lock made every PUT of a
 * cleaning wait for a whole object's copy and persist (the PM write model alone: 150 ns per cache line).
 *
 * <p><b>The atomic word during cleaning</b> (paper §4.4, Figs. 10-13). The tag-selected slot is
 * always the newest version, in whichever chain; offsets are self-describing (slots,
 * {@link LogChain}). The merge and replication copy the current version and record the copy in the
 * other slot without flipping ({@link AtomicWord#withPrevious}); a PUT meanwhile flips as always, so
 * a reader of either kind never needs the cleaning state: current, else previous. The switch flips
 * the tag of every entry whose other slot holds a copy of its current version, and clears any slot
 * still pointing into the old chain once it is not needed as a rollback target.
 *
 * <p>Every change of a word is a CAS from the word the decision was made on (docs/one-sided-put.md, [word-cas]); one
 * lost to a client's one-sided update is decided again from the word that update left (a copy already written for
 * the lost decision stays unreferenced).
 */
final class Relocation {
    /** What happened to one scanned object or one entry. */
    enum Outcome { COPIED, STALE, REMOVED, FLIPPED, CLEARED, PENDING, UNTOUCHED }

    private final CleaningHost host;
    private final LogHead head;
    private final HopscotchTable table;
    private final ObjectFlyweight scratch = new ObjectFlyweight();
    private final ObjectFlyweight other = new ObjectFlyweight();
    private final ObjectFlyweight candidate = new ObjectFlyweight();
    /** The word {@link #currentEntry} found the entry with: what a change of the entry CASes from. */
    private long foundWord;
    long bytesCopied;
    long objectsCopied;
    long staleSkipped;
    long entriesRemoved;

    Relocation(CleaningHost host, LogHead head, HopscotchTable table) {
        this.host = host;
        this.head = head;
        this.table = table;
    }

    /** A copy planned by {@link #plan}: the version at {@code units} of the key hashed {@code hash}, to {@code target}. */
    record Copy(long hash, long units, long length, long target) {
    }

    /**
     * Merge/replicate step for a valid object of the old chain at {@code chainOffset}, locked: if it is its key's
     * current version, reserves the space of its copy (returned, to {@link #write} and {@link #record}); if that
     * version is a tombstone, removes the entry; else the object is stale and dropped. Null but for a copy.
     */
    Copy plan(long chainOffset, ObjectFlyweight object) {
        long units = LogAddress.unitsForBytes(chainOffset);
        long hash = KeyHash.hash(object.key().toArray(ValueLayout.JAVA_BYTE));
        int position;
        while ((position = currentEntry(hash, units)) >= 0 && object.isTombstone()) {
            if (table.remove(position, foundWord)) { // paper §4.4: deleted objects are removed
                entriesRemoved++;
                return null;
            }
        }
        if (position < 0) {
            staleSkipped++;
            return null;
        }
        if (isCopy(AtomicWord.previous(foundWord), units)) {
            return null; // already copied
        }
        return new Copy(hash, units, object.totalLength(), reserveCopy(object.totalLength()));
    }

    /** Copies and persists a planned copy; without the lock (the reserved space is the cleaner's alone). */
    void write(Copy copy) {
        writeCopy(copy.units(), copy.target(), copy.length());
    }

    /**
     * Records a written copy in its entry's other slot, without flipping, if the version it copies is still current;
     * locked. Otherwise a PUT superseded it meanwhile and the copy stays unreferenced.
     */
    Outcome record(Copy copy) {
        int position;
        while ((position = currentEntry(copy.hash(), copy.units())) >= 0) {
            long word = foundWord;
            if (table.compareAndSetAtomicWord(position, word, AtomicWord.withPrevious(word,
                    LogAddress.unitsForBytes(copy.target())))) {
                bytesCopied += copy.length();
                objectsCopied++;
                return Outcome.COPIED;
            }
        }
        staleSkipped++;
        return Outcome.STALE;
    }

    /**
     * The valid object at {@code units} in the old chain, wrapped in a flyweight of the relocation's own (until the
     * next call), or null if there is none yet (a reservation whose WRITE is in flight, or torn). Unlocked: a
     * written object does not change while its chain is being cleaned.
     */
    ObjectFlyweight validObject(long units) {
        return valid(units, candidate);
    }

    /** {@code into} wrapping the valid object at {@code units}, or null if there is none. */
    private ObjectFlyweight valid(long units, ObjectFlyweight into) {
        long offset = LogAddress.bytesForUnits(units);
        if (!head.isMapped(offset, 0)) {
            return null;
        }
        ChainPosition at = head.resolve(offset);
        MemorySegment data = at.region().data();
        return into.wrap(data, at.offsetInRegion()).validate(data.byteSize() - at.offsetInRegion(), null).isValid()
                ? into : null;
    }

    /** The position of this head's entry whose current version is at {@code units} (its word in {@link #foundWord}), or -1. */
    private int currentEntry(long hash, long units) {
        int headId = head.headId();
        return table.lookup(hash, (p, word, h) -> {
            foundWord = word;
            return h == headId && AtomicWord.current(word) == units;
        });
    }

    /**
     * Switch step for an entry of the head: afterwards it references {@code old} no more, unless
     * {@link Outcome#PENDING} (a version it needs is still being written; retry once settled). Locked.
     */
    Outcome detachFromOldChain(int position, long word, LogChain old) {
        Outcome outcome;
        while ((outcome = tryDetach(position, word, old)) == null) {
            word = table.atomicWord(position); // a client's CAS won: decide again from the word it left
        }
        return outcome;
    }

    /** {@link #detachFromOldChain} from {@code word}; null if a CAS from it lost. */
    private Outcome tryDetach(int position, long word, LogChain old) {
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
                if (!table.remove(position, word)) {
                    return null;
                }
                entriesRemoved++;
                return Outcome.REMOVED;
            }
            long recorded = isCopy(previous, current) ? word : AtomicWord.withPrevious(word, copyToNewChain(current, length));
            // paper §4.4 Fig. 13: the flip makes the copy current; the old version is not kept as previous
            return table.compareAndSetAtomicWord(position, word,
                    AtomicWord.withPrevious(AtomicWord.withTagFlipped(recorded), AtomicWord.NONE)) ? Outcome.FLIPPED : null;
        }
        if (previousOld) {
            if (current != AtomicWord.NONE && validLength(current) < 0) {
                // the old previous version is this entry's rollback target ([last-complete-version])
                return Outcome.PENDING;
            }
            return table.compareAndSetAtomicWord(position, word, AtomicWord.withPrevious(word, AtomicWord.NONE))
                    ? Outcome.CLEARED : null;
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
        return valid(units, scratch) == null ? -1 : scratch.totalLength();
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
     * the switch, the head's chain), persisted before returning its offset in units. Locked.
     */
    private long copyToNewChain(long units, long length) {
        long target = reserveCopy(length);
        writeCopy(units, target, length);
        bytesCopied += length;
        objectsCopied++;
        return LogAddress.unitsForBytes(target);
    }

    /** Reserves {@code length} bytes where cleaner copies go; returns their chain offset. Locked. */
    private long reserveCopy(long length) {
        long appendedBefore = head.regionsAppended(); // not regionCount(): see Store's reserveTail
        long target = head.newChain() != null ? head.reserveInNewChain(length) : head.reserve(length);
        if (head.regionsAppended() != appendedBefore) {
            host.regionsAdded(head.headId());
        }
        return target;
    }

    /**
     * Copies the object at {@code units} to the reserved {@code target} and persists it before any entry points at it.
     * The host hears of every copy written ({@link CleaningHost#bytesCopied}: PM written), {@link #bytesCopied} only of
     * those recorded (live).
     */
    private void writeCopy(long units, long target, long length) {
        ChainPosition from = head.resolve(LogAddress.bytesForUnits(units));
        ChainPosition to = head.resolve(target);
        to.region().write(to.offsetInRegion(), from.region().data().asSlice(from.offsetInRegion(), length));
        to.region().persist(to.offsetInRegion(), length);
        host.bytesCopied(length);
    }
}
