package io.erda.remotelog;

import java.lang.foreign.MemorySegment;
import java.util.HashMap;
import java.util.Iterator;
import java.util.Map;

/**
 * Judges the history of one cell: every append acknowledged before a power failure must be in the recovered log,
 * intact, at its position, with its sequence; one that is not is lost ({@code missing}); a record the recovered tail
 * pointer claims but that is not intact is torn. A lost append is counted once, at the failure that lost it, and its
 * position is appended again afterwards.
 */
public final class LossChecker {
    private final LogLayout layout;
    /** position → sequence of the acknowledged append that must be there. */
    private final Map<Long, Long> acknowledged = new HashMap<>();
    private long acknowledgedTotal;
    private long missing;
    private long torn;

    public LossChecker(LogLayout layout) {
        this.layout = layout;
    }

    /** The append of {@code sequence} at {@code position} was reported durable while power was on. */
    public void acknowledged(long position, long sequence) {
        acknowledged.put(position, sequence);
        acknowledgedTotal++;
    }

    /** Checks a recovery against the history; returns the appends it lost (missing plus torn). */
    public long check(Recovery.Recovered recovered) {
        MemorySegment log = MemorySegment.ofArray(recovered.log());
        long lost = recovered.tornBelowTail();
        torn += recovered.tornBelowTail();
        for (Iterator<Map.Entry<Long, Long>> it = acknowledged.entrySet().iterator(); it.hasNext(); ) {
            Map.Entry<Long, Long> e = it.next();
            long position = e.getKey();
            if (position >= recovered.tail() || layout.intactSequence(log, position) != e.getValue()) {
                missing++;
                lost++;
                it.remove();
            }
        }
        return lost;
    }

    /** Forgets the history (the log starts empty again). */
    public void reset() {
        acknowledged.clear();
    }

    public long acknowledgedTotal() {
        return acknowledgedTotal;
    }

    public long missing() {
        return missing;
    }

    public long torn() {
        return torn;
    }

    public long lost() {
        return missing + torn;
    }
}
