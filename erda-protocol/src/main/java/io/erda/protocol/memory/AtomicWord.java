package io.erda.protocol.memory;

/**
 * The 8-byte atomic word of a hash entry (paper §3.2.3, Fig. 6; §4.1 "flexible flip bit").
 *
 * <pre>
 *  63 62                          32 31                           1  0
 * +--+------------------------------+------------------------------+--+
 * |T |        Offset A (31 bits)    |        Offset B (31 bits)    |F |
 * +--+------------------------------+------------------------------+--+
 * </pre>
 *
 * <p>T is the new tag: when 1, A is the current (newest) version and B the previous; when 0, B is
 * current and A previous. An update flips T and writes the new offset into the slot that held the
 * previous version, so the old current becomes previous without being rewritten (paper §4.1: if
 * the tag to be written is 1 the address goes to the first region, else to the second). Offsets
 * are in 8-byte units inside the head's chain ({@link LogAddress}); offset 0 means "no version".
 *
 * <p><b>Writers CAS</b> (docs/one-sided-put.md, [word-cas]): every change of a word is one 8-byte
 * compare-and-set from the word the writer read, so that no writer overwrites a change it did not
 * see. F is the <em>frozen</em> bit: the server sets it (by CAS) on a word it is about to move to
 * another bucket or clear, so a CAS from the word read before fails; a frozen word never stays
 * frozen once the server lets go of the table, and recovery unfreezes what a crash left. Readers
 * ignore F (the offsets do not change); a writer that reads F set reads the entry again.
 */
public final class AtomicWord {
    public static final int LENGTH = 8;
    public static final int OFFSET_BITS = 31;
    /** Largest offset a slot holds, in 8-byte units (so 16 GiB of chain per head). */
    public static final long MAX_OFFSET = (1L << OFFSET_BITS) - 1;
    /** Offset value meaning "no version". */
    public static final long NONE = 0;

    private static final int TAG_SHIFT = 63;
    private static final int A_SHIFT = 32;
    private static final int B_SHIFT = 1;
    private static final long FROZEN = 1L;

    private AtomicWord() {
    }

    /** The word of a freshly created key: tag 1, current = {@code offset}, no previous. */
    public static long initial(long offset) {
        return withA(withTag(0, true), checkOffset(offset));
    }

    /** New tag bit. */
    public static boolean newTag(long word) {
        return (word >>> TAG_SHIFT) != 0;
    }

    /** Offset of slot A (the first 31-bit region). */
    public static long offsetA(long word) {
        return (word >>> A_SHIFT) & MAX_OFFSET;
    }

    /** Offset of slot B (the second 31-bit region). */
    public static long offsetB(long word) {
        return (word >>> B_SHIFT) & MAX_OFFSET;
    }

    /** Offset of the newest version, {@link #NONE} if none. */
    public static long current(long word) {
        return newTag(word) ? offsetA(word) : offsetB(word);
    }

    /** Offset of the version before the newest, {@link #NONE} if none. */
    public static long previous(long word) {
        return newTag(word) ? offsetB(word) : offsetA(word);
    }

    /** Flips the tag and writes {@code offset} into the slot of the previous version: old current becomes previous. */
    public static long withNewVersion(long word, long offset) {
        checkOffset(offset);
        boolean tag = !newTag(word);
        long flipped = withTag(word, tag);
        return tag ? withA(flipped, offset) : withB(flipped, offset);
    }

    /** Replaces the current version in place, keeping tag and previous (rollback to a complete version, §4.2). */
    public static long withCurrent(long word, long offset) {
        checkOffset(offset);
        return newTag(word) ? withA(word, offset) : withB(word, offset);
    }

    /** Replaces the previous version in place, keeping tag and current (the cleaner's slot, §4.4). */
    public static long withPrevious(long word, long offset) {
        checkOffset(offset);
        return newTag(word) ? withB(word, offset) : withA(word, offset);
    }

    /** Flips only the tag: previous and current swap roles (end of cleaning, §4.4 Fig. 13). */
    public static long withTagFlipped(long word) {
        return withTag(word, !newTag(word));
    }

    /** Whether the server has frozen the word (bit F) to move or clear its entry. */
    public static boolean isFrozen(long word) {
        return (word & FROZEN) != 0;
    }

    /** The word with F set: what the server CASes in before it moves or clears an entry. */
    public static long frozen(long word) {
        return word | FROZEN;
    }

    /** The word with F clear (the same versions). */
    public static long unfrozen(long word) {
        return word & ~FROZEN;
    }

    private static long withTag(long word, boolean tag) {
        return tag ? word | (1L << TAG_SHIFT) : word & ~(1L << TAG_SHIFT);
    }

    private static long withA(long word, long offset) {
        return (word & ~(MAX_OFFSET << A_SHIFT)) | (offset << A_SHIFT);
    }

    private static long withB(long word, long offset) {
        return (word & ~(MAX_OFFSET << B_SHIFT)) | (offset << B_SHIFT);
    }

    private static long checkOffset(long offset) {
        if (offset < 0 || offset > MAX_OFFSET) {
            throw new IllegalArgumentException("offset " + offset + " outside [0, " + MAX_OFFSET + "] (8-byte units)");
        }
        return offset;
    }

    public static String toString(long word) {
        return "AtomicWord[tag=" + (newTag(word) ? 1 : 0) + ", current=" + current(word) + ", previous=" + previous(word)
                + (isFrozen(word) ? ", frozen" : "") + "]";
    }
}
