package io.erda.client;

import io.erda.core.hash.Key;
import io.erda.core.layout.AtomicWord;
import io.erda.core.table.NeighbourhoodWindow;
import io.erda.core.table.TableGeometry;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;

/**
 * The server's hopscotch table as a client reads it, one-sided: a key's neighbourhood window (one READ, paper §3.3)
 * and the stripe version words that cover it ([moves-vs-readers]), and whether an entry still has a given object as
 * current ([leases]). The one place GET ({@link ErdaGet}) and PUT ({@link ErdaPut}) read entries. Each read is one
 * READ on the given connection, copied to the heap because the read buffer is reused for the objects.
 */
final class RemoteTable {
    private final ClientStats stats;

    RemoteTable(ClientStats stats) {
        this.stats = stats;
    }

    /** READs the window of {@code key}'s home bucket: H entries, decoded by {@link NeighbourhoodWindow}. */
    MemorySegment window(Connection c, Key key) {
        StoreView view = c.view();
        stats.oneSidedReads.increment();
        TableGeometry table = view.table();
        long home = table.homeBucket(key.hash());
        return readCopy(c, table.windowLength(), view.windowAddress(home), view.info().table().rkey());
    }

    /** READs the version words of the one or two stripes {@code key}'s window spans ([moves-vs-readers]). */
    MemorySegment windowVersions(Connection c, Key key) {
        StoreView view = c.view();
        long home = view.table().homeBucket(key.hash());
        stats.oneSidedReads.increment();
        return readCopy(c, view.table().windowVersionsLength(home), view.windowVersionsAddress(home),
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
    boolean currentAndUnchanged(Connection c, Key key, int head, long units, int generation) {
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

    private static MemorySegment readCopy(Connection c, int length, long address, int rkey) {
        c.reads.ensure(length);
        c.read(0, length, address, rkey);
        return MemorySegment.ofArray(c.reads.segment().asSlice(0, length).toArray(ValueLayout.JAVA_BYTE));
    }
}
