package io.erda.core.table;

import io.erda.core.pm.MappingAdvice;
import io.erda.core.pm.PmFileHeader;
import io.erda.core.pm.PmFormatException;
import io.erda.core.pm.PmRegion;
import io.erda.core.pm.WriteLatencyModel;
import io.erda.protocol.memory.AtomicWord;
import io.erda.protocol.memory.HashEntryLayout;
import io.erda.protocol.memory.KeyHash;
import io.erda.protocol.memory.NeighbourhoodWindow;
import io.erda.protocol.memory.TableGeometry;
import io.erda.protocol.memory.Words;
import java.nio.file.Path;
import java.util.Arrays;

/**
 * The hopscotch hash table in PM (paper §3.2.3) that clients read with one-sided READs.
 *
 * <p><b>Layout.</b> See {@link TableGeometry} (entries, H-1 overflow buckets, stripe versions) and
 * {@link HashEntryLayout}. Header geometry slots: 0 capacity, 1 H, 2 stripe size, 3..5 left to the
 * owner ({@code PmDirectory} stores the store geometry there).
 *
 * <p><b>Choice of H = 32</b> ({@link #DEFAULT_NEIGHBOURHOOD}). Measured by
 * {@code NeighbourhoodSizeMeasurementTest} (random keys, capacity 2^16, 16-byte entries, linear
 * probe to the end of the table, standard displacement, mean of 3 seeds): load factor reached when
 * the first insert fails was H=8: 0.475, H=16: 0.752, H=32: 0.893, H=64: 0.948. H=32 fills 89% of
 * the table with a 512-byte window, still one small READ (well under one MTU); H=16 would halve
 * the window but waste a quarter of the table and fail inserts early; H=64 gains 5 points for a
 * 1 KiB window on every GET.
 *
 * <p><b>Store order</b> (8-byte stores, so a reader never trusts a half-built entry). Insert:
 * atomic word, then meta word (VALID). Remove: meta word (invalid) first, then atomic word zeroed.
 * A reader that sees VALID with a stale zero word sees current offset 0 and treats it as a miss to
 * be confirmed ({@link NeighbourhoodWindow}). Every mutation persists what it stored before
 * returning.
 *
 * <p><b>Atomic words change only by CAS</b> ({@link AtomicWord}, docs/one-sided-put.md, [word-cas]):
 * clients may CAS a word with one-sided atomics at any time, so the table never stores over a word
 * it did not read. {@link #compareAndSetAtomicWord} and {@link #remove} take the word the caller
 * decided from and report whether they won; a loser rereads and decides again. A word leaves its
 * bucket (move, remove) only after the table froze it by CAS ({@link AtomicWord#frozen}): from then
 * on a client's CAS from the word it read fails, so no update lands in a bucket being emptied. A
 * free bucket's word is 0, which no writer may CAS from; insert claims it by CAS from 0. Every change of a word
 * after open, a clear included, goes through the table's {@link WordCas} (the CPU's, or the server's own device).
 *
 * <p><b>Moves</b> go only through {@link #move}: word frozen, stripe versions odd, copy written at
 * the free bucket and persisted, original cleared and persisted, versions even. A crash mid-move
 * leaves at worst the entry twice (both copies identical but for hop distance and the frozen bit)
 * and odd versions; open removes the duplicate, unfreezes words, zeroes words of empty buckets and
 * evens the versions.
 *
 * <p><b>Hop bitmaps</b> are volatile (DRAM, one long per home bucket), rebuilt on open from the
 * hop distances stored in the entries: no NVM write for them on any mutation.
 *
 * <p><b>Threads.</b> One server writer: mutations and server lookups are synchronized on the table;
 * remote readers and remote CAS writers of words need no lock. Positions returned stay valid until the next insert (which may move entries).
 */
public final class HopscotchTable implements AutoCloseable {
    public static final int DEFAULT_NEIGHBOURHOOD = 32;

    private static final int SLOT_CAPACITY = 0;
    private static final int SLOT_NEIGHBOURHOOD = 1;
    private static final int SLOT_STRIPE_SIZE = 2;
    /** First header geometry slot left to the owner of the table. */
    public static final int FIRST_OWNER_SLOT = 3;

    private final PmRegion region;
    private final TableGeometry geometry;
    private final StripeVersions versions;
    private final long[] hopInfo;
    private long count;
    /** How words change once the table is open ({@link #useWordCas}); guarded by the table's monitor. */
    private WordCas wordCas;

    /** Decides whether a candidate entry (fingerprint matched) is the key looked for, e.g. by reading its object. */
    @FunctionalInterface
    public interface CandidateTest {
        boolean matches(int position, long atomicWord, int headId);
    }

    /** Receives each valid entry. */
    @FunctionalInterface
    public interface EntryVisitor {
        void visit(int position, long atomicWord, int fingerprint, int headId);
    }

    private HopscotchTable(PmRegion region, TableGeometry geometry) {
        this.region = region;
        this.geometry = geometry;
        this.versions = new StripeVersions(region, geometry);
        this.hopInfo = new long[Math.toIntExact(geometry.capacity())];
        this.wordCas = WordCas.cpu(region.data());
    }

    /** Creates a new table file; {@code ownerGeometry} (at most 3 values) goes to header slots 3.. . */
    public static HopscotchTable create(Path file, TableGeometry geometry, WriteLatencyModel latency, long... ownerGeometry) {
        return create(file, geometry, latency, MappingAdvice.NONE, ownerGeometry);
    }

    /** {@link #create(Path, TableGeometry, WriteLatencyModel, long...)} with {@code advice} applied to the mapping. */
    public static HopscotchTable create(Path file, TableGeometry geometry, WriteLatencyModel latency, MappingAdvice advice,
                                        long... ownerGeometry) {
        long[] slots = new long[FIRST_OWNER_SLOT + ownerGeometry.length];
        slots[SLOT_CAPACITY] = geometry.capacity();
        slots[SLOT_NEIGHBOURHOOD] = geometry.neighbourhood();
        slots[SLOT_STRIPE_SIZE] = geometry.stripeSize();
        System.arraycopy(ownerGeometry, 0, slots, FIRST_OWNER_SLOT, ownerGeometry.length);
        return new HopscotchTable(PmRegion.create(file, PmFileHeader.KIND_TABLE, geometry.dataLength(), slots, latency, advice),
                geometry);
    }

    /** Opens a table file: rebuilds hop bitmaps and count, removes move duplicates, evens stripe versions. */
    public static HopscotchTable open(Path file, WriteLatencyModel latency) {
        return open(file, latency, MappingAdvice.NONE);
    }

    /** {@link #open(Path, WriteLatencyModel)} with {@code advice} applied to the mapping. */
    public static HopscotchTable open(Path file, WriteLatencyModel latency, MappingAdvice advice) {
        PmRegion region = PmRegion.open(file, PmFileHeader.KIND_TABLE, latency, advice);
        try {
            TableGeometry geometry = storedGeometry(region);
            PmFormatException.requireEqual(file, "data length for " + geometry, region.dataLength(), geometry.dataLength());
            HopscotchTable table = new HopscotchTable(region, geometry);
            table.recover();
            return table;
        } catch (RuntimeException e) {
            region.close();
            throw e;
        }
    }

    /** The table geometry recorded in a table file's header (read without opening the table). */
    public static TableGeometry storedGeometry(PmRegion region) {
        long capacity = region.geometry(SLOT_CAPACITY);
        long neighbourhood = region.geometry(SLOT_NEIGHBOURHOOD);
        long stripeSize = region.geometry(SLOT_STRIPE_SIZE);
        try {
            return new TableGeometry(capacity, Math.toIntExact(neighbourhood), Math.toIntExact(stripeSize));
        } catch (IllegalArgumentException | ArithmeticException e) {
            throw new PmFormatException(region.path() + ": stored table geometry (capacity " + capacity + ", neighbourhood "
                    + neighbourhood + ", stripe size " + stripeSize + ") is impossible: "
                    + (e instanceof ArithmeticException ? "a value exceeds " + Integer.MAX_VALUE : e.getMessage()));
        }
    }

    private void recover() {
        versions.repair();
        for (long position = 0; position < geometry.bucketCount(); position++) {
            long meta = meta(position);
            long word = atomicWord(position);
            if (!HashEntryLayout.isValid(meta)) {
                if (word != 0) { // a crash between an insert's word and its meta, or inside a clear
                    storeDurably(position, 0);
                }
                continue;
            }
            if (AtomicWord.isFrozen(word)) { // a crash inside a move or remove
                storeDurably(position, AtomicWord.unfrozen(word));
            }
            long home = position - HashEntryLayout.hopDistance(meta);
            if (isDuplicateOfEarlierCopy(home, position)) {
                clear(position, AtomicWord.NONE);
                continue;
            }
            hopInfo[(int) home] |= 1L << (position - home);
            count++;
        }
    }

    private boolean isDuplicateOfEarlierCopy(long home, long position) {
        long meta = meta(position);
        long word = atomicWord(position);
        for (long bits = hopInfo[(int) home]; bits != 0; bits &= bits - 1) {
            long other = home + Long.numberOfTrailingZeros(bits);
            if (atomicWord(other) == word && HashEntryLayout.fingerprint(meta(other)) == HashEntryLayout.fingerprint(meta)
                    && HashEntryLayout.headId(meta(other)) == HashEntryLayout.headId(meta)) {
                return true;
            }
        }
        return false;
    }

    /** Recovery only (no other writer yet): stores {@code word} at {@code position} and persists it. */
    private void storeDurably(long position, long word) {
        long offset = wordOffset(position);
        region.setLongRelease(offset, word);
        region.persist(offset, Long.BYTES);
    }

    public TableGeometry geometry() {
        return geometry;
    }

    /** The mapped file, for the fabric to register and for byte accounting. */
    public PmRegion region() {
        return region;
    }

    public synchronized long count() {
        return count;
    }

    /** Position of the entry for which {@code test} says yes, or -1. Candidates are tried in bucket order. */
    public synchronized int lookup(long keyHash, CandidateTest test) {
        long home = geometry.homeBucket(keyHash);
        int fingerprint = KeyHash.fingerprint(keyHash);
        for (long bits = hopInfo[(int) home]; bits != 0; bits &= bits - 1) {
            long position = home + Long.numberOfTrailingZeros(bits);
            long meta = meta(position);
            if (HashEntryLayout.fingerprint(meta) == fingerprint
                    && test.matches((int) position, atomicWord(position), HashEntryLayout.headId(meta))) {
                return (int) position;
            }
        }
        return -1;
    }

    /**
     * Adds an entry (the caller has checked the key is absent) and returns its position. Displaces
     * entries if needed; throws {@link TableFullException} naming capacity and load if no bucket of
     * the neighbourhood can be freed. Persisted on return.
     */
    public synchronized int insert(long keyHash, int headId, long atomicWord) {
        long home = geometry.homeBucket(keyHash);
        long free = firstFreeFrom(home);
        while (free - home >= geometry.neighbourhood()) {
            long from = displaceable(free);
            if (from < 0) {
                throw full(home, "no entry can move into free bucket " + free);
            }
            move(from, free);
            free = from;
        }
        long meta = HashEntryLayout.meta(KeyHash.fingerprint(keyHash), headId, (int) (free - home));
        long offset = geometry.bucketOffset(free);
        claimFree(free, atomicWord);
        region.setLongRelease(offset + HashEntryLayout.META_OFFSET, meta);
        region.persist(offset, HashEntryLayout.LENGTH);
        hopInfo[(int) home] |= 1L << (free - home);
        count++;
        return (int) free;
    }

    private long firstFreeFrom(long home) {
        for (long position = home; position < geometry.bucketCount(); position++) {
            if (!HashEntryLayout.isValid(meta(position))) {
                return position;
            }
        }
        throw full(home, "no free bucket from home to the end of the table");
    }

    /** An occupied bucket before {@code free} whose entry may move to {@code free} and stay in its neighbourhood, or -1. */
    private long displaceable(long free) {
        int h = geometry.neighbourhood();
        for (long home = Math.max(0, free - h + 1); home < free && home < geometry.capacity(); home++) {
            long bits = hopInfo[(int) home];
            if (bits != 0) {
                long position = home + Long.numberOfTrailingZeros(bits);
                if (position < free) {
                    return position;
                }
            }
        }
        return -1;
    }

    /** Moves the entry at {@code from} to the empty bucket {@code to} under the stripe seqlock, its word frozen. */
    private void move(long from, long to) {
        long meta = meta(from);
        long home = from - HashEntryLayout.hopDistance(meta);
        long word = freeze(from);
        versions.begin(from, to);
        long target = geometry.bucketOffset(to);
        claimFree(to, word);
        region.setLongRelease(target + HashEntryLayout.META_OFFSET, HashEntryLayout.withHopDistance(meta, (int) (to - home)));
        // copy durable before the original goes: a crash leaves a duplicate, never a loss
        region.persist(target, HashEntryLayout.LENGTH);
        clear(from, AtomicWord.frozen(word));
        versions.end(from, to);
        hopInfo[(int) home] = (hopInfo[(int) home] & ~(1L << (from - home))) | (1L << (to - home));
    }

    /**
     * Changes the word of the entry at {@code position} from {@code expected} (the word the caller read and decided
     * from) to {@code replacement} with one 8-byte CAS, persisted if it won. False if the word is no longer
     * {@code expected}: another writer (a client's one-sided CAS) won, and the caller rereads and decides again.
     */
    public synchronized boolean compareAndSetAtomicWord(int position, long expected, long replacement) {
        requireValid(position);
        requireUnfrozen("expected", expected);
        requireUnfrozen("replacement", replacement);
        long offset = wordOffset(position);
        if (!wordCas.compareAndSet(offset, expected, replacement)) {
            return false;
        }
        region.recordWrite(offset, Long.BYTES);
        region.persist(offset, Long.BYTES);
        return true;
    }

    /**
     * Removes the entry at {@code position} if its word is still {@code expectedWord}, persisted: the word is frozen
     * by CAS first, so no client's CAS lands between the decision and the clear. False (nothing changed) if another
     * writer changed the word: reread and decide again.
     */
    public synchronized boolean remove(int position, long expectedWord) {
        long meta = requireValid(position);
        requireUnfrozen("expected", expectedWord);
        long offset = wordOffset(position);
        if (!wordCas.compareAndSet(offset, expectedWord, AtomicWord.frozen(expectedWord))) {
            return false;
        }
        region.recordWrite(offset, Long.BYTES);
        long home = position - HashEntryLayout.hopDistance(meta);
        clear(position, AtomicWord.frozen(expectedWord));
        hopInfo[(int) home] &= ~(1L << (position - home));
        count--;
        return true;
    }

    /** Freezes the word at {@code position} by CAS, rereading after each CAS it loses; returns the word (unfrozen). */
    private long freeze(long position) {
        long offset = wordOffset(position);
        for (;;) {
            long word = atomicWord(position);
            if (AtomicWord.isFrozen(word)) { // only the table freezes, under its monitor, and clears before it lets go
                throw new IllegalStateException("word at position " + position + " is already frozen: "
                        + AtomicWord.toString(word));
            }
            if (wordCas.compareAndSet(offset, word, AtomicWord.frozen(word))) {
                region.recordWrite(offset, Long.BYTES);
                return word;
            }
        }
    }

    /** Stores {@code word} into the free bucket at {@code position} by CAS from 0 (nobody may CAS a free word). */
    private void claimFree(long position, long word) {
        long offset = wordOffset(position);
        if (!wordCas.compareAndSet(offset, 0, word)) {
            throw new IllegalStateException("free bucket " + position + " holds " + AtomicWord.toString(atomicWord(position))
                    + ", not 0: a writer CASed the word of a bucket without an entry");
        }
        region.recordWrite(offset, Long.BYTES);
    }

    private static void requireUnfrozen(String which, long word) {
        if (AtomicWord.isFrozen(word)) {
            throw new IllegalArgumentException(which + " word " + AtomicWord.toString(word)
                    + " has the frozen bit set: only the table freezes a word");
        }
    }

    private long wordOffset(long position) {
        return geometry.bucketOffset(position) + HashEntryLayout.ATOMIC_WORD_OFFSET;
    }

    /**
     * Empties the bucket at {@code position}: meta first, then the word, by CAS from {@code frozenWord} (the table's
     * own freeze, which no other writer's CAS can pass), or with a plain store at open ({@link AtomicWord#NONE}).
     */
    private void clear(long position, long frozenWord) {
        long offset = geometry.bucketOffset(position);
        region.setLongRelease(offset + HashEntryLayout.META_OFFSET, 0);
        if (frozenWord == AtomicWord.NONE) {
            region.setLongRelease(offset + HashEntryLayout.ATOMIC_WORD_OFFSET, 0);
        } else {
            if (!wordCas.compareAndSet(offset + HashEntryLayout.ATOMIC_WORD_OFFSET, frozenWord, 0)) {
                throw new IllegalStateException("frozen word at position " + position + " changed to "
                        + AtomicWord.toString(atomicWord(position)) + " before the table cleared it");
            }
            region.recordWrite(offset + HashEntryLayout.ATOMIC_WORD_OFFSET, Long.BYTES);
        }
        region.persist(offset, HashEntryLayout.LENGTH);
    }

    /** The atomic word at {@code position} (acquire). */
    public long atomicWord(long position) {
        return Words.getAcquire(region.data(), wordOffset(position));
    }

    private long meta(long position) {
        return Words.getAcquire(region.data(), geometry.bucketOffset(position) + HashEntryLayout.META_OFFSET);
    }

    private long requireValid(int position) {
        if (position < 0 || position >= geometry.bucketCount()) {
            throw new IllegalArgumentException("position " + position + " outside [0, " + geometry.bucketCount() + ")");
        }
        long meta = meta(position);
        if (!HashEntryLayout.isValid(meta)) {
            throw new IllegalArgumentException("position " + position + " holds no entry");
        }
        return meta;
    }

    /** Visits every valid entry in bucket order (recovery, verify, rebuild, cleaner). */
    public synchronized void forEach(EntryVisitor visitor) {
        forEach(0, geometry.capacity(), visitor);
    }

    /**
     * Visits the valid entries whose home bucket lies in {@code [fromHome, toHome)} (a pass over the
     * table in chunks, e.g. the cleaner's, which must tolerate entries moved between chunks).
     */
    public synchronized void forEach(long fromHome, long toHome, EntryVisitor visitor) {
        for (long home = Math.max(0, fromHome); home < Math.min(toHome, geometry.capacity()); home++) {
            for (long bits = hopInfo[(int) home]; bits != 0; bits &= bits - 1) {
                long position = home + Long.numberOfTrailingZeros(bits);
                long meta = meta(position);
                visitor.visit((int) position, atomicWord(position), HashEntryLayout.fingerprint(meta), HashEntryLayout.headId(meta));
            }
        }
    }

    /**
     * Changes every later word CAS to {@code cas} (the server's own device where the CPU's CAS is not atomic with
     * clients' remote ones); {@link WordCas#cpu} on the data area until then.
     */
    public synchronized void useWordCas(WordCas cas) {
        this.wordCas = java.util.Objects.requireNonNull(cas, "cas");
    }

    /** Persist hook for the server: makes a data-area range of the table durable. */
    public void persist(long dataOffset, long length) {
        region.persist(dataOffset, length);
    }

    /** Current version word of a stripe (for tests and diagnostics). */
    long stripeVersion(long stripe) {
        return versions.version(stripe);
    }

    private TableFullException full(long home, String why) {
        return new TableFullException(String.format("hopscotch table full: %s (home bucket %d, H=%d); capacity %d, "
                + "%d entries, load %.3f", why, home, geometry.neighbourhood(), geometry.capacity(), count,
                (double) count / geometry.capacity()));
    }

    /**
     * Clears every entry and hop bitmap (a table being rebuilt from the logs). Stripe versions are
     * kept: resetting them could make a reader's before/after versions equal across the change.
     */
    public synchronized void clearAll() {
        long entries = geometry.bucketOffset(geometry.bucketCount());
        region.data().asSlice(0, entries).fill((byte) 0);
        region.recordWrite(0, entries);
        region.persist(0, entries);
        Arrays.fill(hopInfo, 0);
        count = 0;
    }

    @Override
    public void close() {
        region.close();
    }
}
