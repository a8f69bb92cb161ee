package io.erda.client;

import io.erda.protocol.memory.AtomicWord;
import io.erda.protocol.memory.Key;
import io.erda.protocol.memory.NeighbourhoodWindow;
import io.erda.protocol.memory.TableGeometry;
import java.lang.foreign.MemorySegment;

/**
 * The server's hopscotch table as a client reads it, one-sided: a key's neighbourhood window (one READ, paper §3.3)
 * and the stripe version words that cover it ([moves-vs-readers]), and whether an entry still has a given object as
 * current ([leases]). The one place GET ({@link ErdaGet}) and PUT ({@link ErdaPut}) read entries. Each read is one
 * READ on the given connection into its entry buffer ({@link ClientConnection#entries}: the window, then two places for
 * version words), apart from the buffer objects are read into, so what it returns is a slice of registered memory,
 * valid until the same place is read again: no heap copy (the window's copy had been the client's largest
 * allocation per GET).
 */
final class RemoteTable {
    private final ClientStats stats;

    RemoteTable(ClientStats stats) {
        this.stats = stats;
    }

    /** The places {@link #windowVersions} reads into: a miss's check reads the words before and after the window. */
    static final int BEFORE = 0;
    static final int AFTER = 1;
    /** Bytes of one place for version words: at most two stripes' words ({@link TableGeometry#windowVersionsLength}). */
    private static final int VERSIONS_PLACE = 2 * Long.BYTES;

    /** READs the window of {@code key}'s home bucket: H entries, decoded by {@link NeighbourhoodWindow}. */
    MemorySegment window(ClientConnection c, Key key) {
        StoreView view = c.view();
        stats.oneSidedReads.increment();
        TableGeometry table = view.table();
        long home = table.homeBucket(key.hash());
        return read(c, 0, table.windowLength(), view.windowAddress(home), view.info().table().rkey());
    }

    /**
     * READs the version words of the one or two stripes {@code key}'s window spans ([moves-vs-readers]) into place
     * {@code place} ({@link #BEFORE} or {@link #AFTER}), neither of which the window's READ overwrites.
     */
    MemorySegment windowVersions(ClientConnection c, Key key, int place) {
        StoreView view = c.view();
        long home = view.table().homeBucket(key.hash());
        stats.oneSidedReads.increment();
        long offset = view.table().windowLength() + (long) place * VERSIONS_PLACE;
        return read(c, offset, view.table().windowVersionsLength(home), view.windowVersionsAddress(home),
                view.info().stripes().rkey());
    }

    /**
     * [leases], for a PUT that outlived its lease: true if the entry of {@code key} still has the object at chain
     * offset {@code units} of {@code head} as current, and the head array has not changed since the reservation
     * ({@code generation}). False means it may have been rolled back: PUT again.
     *
     * <p>Chain offsets do not order versions: the cleaner moves objects to another chain and a chain takes free
     * slots at any offset (paper §4.4, core's {@code LogChain}), and a slot may even hold the same offset again in a
     * later chain. So a different current version, a head being cleaned or a changed generation all answer false:
     * the PUT, which has not returned, is simply ordered after whatever happened meanwhile. That costs one more PUT in
     * a rare case (a lease outlived), never a lost one. A concurrent move that hides the entry also answers false.
     */
    boolean currentAndUnchanged(ClientConnection c, Key key, int head, long units, int generation) {
        StoreView view = c.view();
        if (view.isCleaning(head) || view.generation(head) != generation) {
            return false;
        }
        MemorySegment window = window(c, key);
        long mask = NeighbourhoodWindow.candidates(window, view.table().neighbourhood(), key.hash());
        for (; mask != 0; mask &= mask - 1) {
            int index = Long.numberOfTrailingZeros(mask);
            if (NeighbourhoodWindow.headId(window, index) == head
                    && AtomicWord.current(NeighbourhoodWindow.atomicWord(window, index)) == units) {
                return true;
            }
        }
        return false;
    }

    private static MemorySegment read(ClientConnection c, long offset, int length, long address, int rkey) {
        c.entries.ensure(c.view().table().windowLength() + 2L * VERSIONS_PLACE);
        c.readEntries(offset, length, address, rkey);
        return c.entries.segment().asSlice(offset, length);
    }
}
