package io.erda.protocol.memory;

import java.lang.foreign.MemorySegment;

/**
 * Client-side reading of a neighbourhood window: pure functions over bytes a client READ remotely.
 *
 * <p>Protocol (docs/ARCHITECTURE.md, [moves-vs-readers]), with the ranges of {@link TableGeometry}:
 * <ol>
 *   <li>READ the window of the home bucket; {@link #candidates} gives the entries whose fingerprint
 *       matches and whose hop distance puts them in this home bucket. For each, read the object at
 *       the current offset and compare the full key. A found key with a nonzero current offset is
 *       trusted: moves copy an entry before clearing the original, so a present entry is never
 *       replaced by garbage, only possibly seen twice.</li>
 *   <li>A miss (no candidate, no key match, or a matching entry whose current offset is
 *       {@link AtomicWord#NONE} because its word and meta were caught half-written) is only trusted
 *       after confirmation: on one connection, in order, READ the stripe versions
 *       ({@link TableGeometry#windowVersionsOffset}), READ the window again, READ the versions again.
 *       The miss is real if the window still misses and {@link #missConfirmed} holds; otherwise
 *       retry.</li>
 * </ol>
 * Why this is enough: a key can only leave the window through a move inside its neighbourhood;
 * the server makes the versions of both stripes touched odd before the move and even (bumped)
 * after, and both stripes intersect the window. A window read between two equal even version
 * reads therefore saw no move in progress and none completed: it is a consistent snapshot of the
 * key's entry.
 */
public final class NeighbourhoodWindow {
    private NeighbourhoodWindow() {
    }

    /**
     * Bit mask of window indices holding a candidate entry for {@code keyHash}: valid, same
     * fingerprint, hop distance equal to the index (home bucket is the window's first bucket).
     * Several bits may be set; the full key decides.
     */
    public static long candidates(MemorySegment window, int neighbourhood, long keyHash) {
        // One masked compare per entry (valid flag, fingerprint and hop distance at once), no branch on the entry's
        // contents: it runs over all H entries on every GET (H = 32), where the three tests one by one were a
        // seventh of a GET's CPU on a store that fits in cache.
        long wanted = HashEntryLayout.meta(KeyHash.fingerprint(keyHash), 0, 0);
        long mask = 0;
        int entries = (int) Math.min(neighbourhood, window.byteSize() / HashEntryLayout.LENGTH);
        for (int i = 0; i < entries; i++) {
            long meta = Words.get(window, (long) i * HashEntryLayout.LENGTH + HashEntryLayout.META_OFFSET);
            long match = (meta & CANDIDATE_BITS) == (wanted | HashEntryLayout.hopDistanceBits(i)) ? 1L : 0L;
            mask |= match << i;
        }
        return mask;
    }

    /** The meta bits a candidate must match: fingerprint, hop distance and VALID (not the head id, other flags). */
    private static final long CANDIDATE_BITS = HashEntryLayout.FINGERPRINT_BITS | HashEntryLayout.HOP_DISTANCE_BITS
            | HashEntryLayout.FLAG_VALID;

    /** Atomic word of the entry at {@code index} of a window. */
    public static long atomicWord(MemorySegment window, int index) {
        return Words.get(window, (long) index * HashEntryLayout.LENGTH + HashEntryLayout.ATOMIC_WORD_OFFSET);
    }

    /** Head id of the entry at {@code index} of a window. */
    public static int headId(MemorySegment window, int index) {
        return HashEntryLayout.headId(Words.get(window, (long) index * HashEntryLayout.LENGTH + HashEntryLayout.META_OFFSET));
    }

    /** True when both version reads are identical and every word is even: no move overlapped the window read. */
    public static boolean missConfirmed(MemorySegment versionsBefore, MemorySegment versionsAfter) {
        if (versionsBefore.byteSize() != versionsAfter.byteSize() || versionsBefore.byteSize() % Long.BYTES != 0
                || versionsBefore.byteSize() == 0) {
            return false;
        }
        for (long offset = 0; offset < versionsBefore.byteSize(); offset += Long.BYTES) {
            long before = Words.get(versionsBefore, offset);
            if ((before & 1) != 0 || before != Words.get(versionsAfter, offset)) {
                return false;
            }
        }
        return true;
    }
}
