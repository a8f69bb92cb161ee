package io.erda.core.testing;

import io.erda.core.table.HopscotchTable;
import io.erda.core.table.WordCas;
import io.erda.protocol.memory.AtomicWord;
import io.erda.protocol.memory.HashEntryLayout;

/**
 * A client updating entries' words as the one-sided update does: locate the entry (its position and word, read
 * together), then one CAS from that word to the flipped word naming a new offset; a lost CAS locates again and
 * retries. The CAS is the shm provider's remote CAS (a VarHandle CAS on the mapping) unless another is given (a remote
 * CAS through a fabric). Every CAS won is recorded in the entry's {@link WordHistory}.
 */
public final class CasClient {
    /** Finds an entry: {@code {position, word}} read together, or null if the key has no entry. */
    @FunctionalInterface
    public interface Locator {
        long[] locate();
    }

    private final HopscotchTable table;
    private final String name;
    private final WordCas cas;
    private long lost;

    public CasClient(HopscotchTable table, String name) {
        this(table, name, WordCas.cpu(table.region().data()));
    }

    /** A client whose CAS is {@code cas} at an offset of the table's data area. */
    public CasClient(HopscotchTable table, String name, WordCas cas) {
        this.table = table;
        this.name = name;
        this.cas = cas;
    }

    /**
     * Makes {@code offset} the entry's current version; false if the key has no entry (any more). Between locating and
     * the CAS the thread yields now and then, so the server's writers get between the two.
     */
    public boolean update(Locator locator, long offset, WordHistory history) {
        for (int attempt = 0; ; attempt++) {
            long[] found = locator.locate();
            if (found == null) {
                return false;
            }
            long word = found[1];
            if (AtomicWord.isFrozen(word)) { // being moved or removed: locate again
                Thread.onSpinWait();
                continue;
            }
            if ((attempt & 3) == 0) {
                Thread.yield();
            }
            long replacement = AtomicWord.withNewVersion(word, offset);
            long wordOffset = table.geometry().bucketOffset(found[0]) + HashEntryLayout.ATOMIC_WORD_OFFSET;
            if (cas.compareAndSet(wordOffset, word, replacement)) {
                history.changed(name, word, replacement);
                return true;
            }
            lost++;
        }
    }

    /** CASes this client lost (and retried). */
    public long lost() {
        return lost;
    }
}
