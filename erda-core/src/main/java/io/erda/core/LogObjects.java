package io.erda.core;

import io.erda.core.log.ChainPosition;
import io.erda.core.log.LogHead;
import io.erda.core.log.LogScanner;
import io.erda.protocol.memory.AtomicWord;
import io.erda.protocol.memory.LogAddress;
import io.erda.protocol.memory.LogGeometry;
import io.erda.protocol.memory.ObjectCheck;
import io.erda.protocol.memory.ObjectFlyweight;
import java.lang.foreign.MemorySegment;
import java.util.function.Predicate;

/**
 * Objects of a store's heads addressed the way entries address them (head id and offset in 8-byte units). Never
 * throws on a garbage offset or garbage bytes: anything that cannot be an object is simply not valid.
 */
public final class LogObjects {
    private final PmDirectory directory;

    public LogObjects(PmDirectory directory) {
        this.directory = directory;
    }

    /** Checks the object an entry offset names; {@code key} null accepts any key. */
    public ObjectCheck check(int head, long units, MemorySegment key) {
        return wrap(head, units, new ObjectFlyweight(), key);
    }

    /** Wraps {@code object} over the object at {@code units} and validates it (only VALID makes the view usable). */
    public ObjectCheck wrap(int head, long units, ObjectFlyweight object, MemorySegment key) {
        if (units == AtomicWord.NONE || head < 0 || head >= directory.heads().size()) {
            return ObjectCheck.TRUNCATED;
        }
        LogHead logHead = directory.head(head);
        long chainOffset = LogAddress.bytesForUnits(units);
        ChainPosition position;
        try {
            position = logHead.resolve(chainOffset);
        } catch (IllegalArgumentException outsideChain) {
            return ObjectCheck.TRUNCATED;
        }
        LogGeometry geometry = logHead.geometry();
        long available = geometry.segmentStart(chainOffset) + geometry.segmentSize() - chainOffset;
        return object.wrap(position.region().data(), position.offsetInRegion()).validate(available, key);
    }

    public boolean isComplete(int head, long units, MemorySegment key) {
        return check(head, units, key).isValid();
    }

    /**
     * Offset (units) of the newest complete object of {@code key} in {@code head}'s log strictly before
     * {@code beforeUnits}, or {@link AtomicWord#NONE}: the last resort of a rollback ([last-complete-version]). Scans
     * the whole chain, resynchronising past torn areas.
     */
    public long newestCompleteBefore(int head, MemorySegment key, long beforeUnits) {
        long[] newest = {AtomicWord.NONE};
        LogHead logHead = directory.head(head);
        long limit = logHead.logOrder(LogAddress.bytesForUnits(beforeUnits));
        scan(head, object -> object.key().mismatch(key) == -1, (chainOffset, object) -> {
            if (logHead.logOrder(chainOffset) < limit) { // chains may sit at any slots: compare log order, not offsets
                newest[0] = LogAddress.unitsForBytes(chainOffset);
            }
        });
        return newest[0];
    }

    /** Visits every complete object of {@code head} whose key {@code filter} accepts, in log (version) order. */
    public void scan(int head, Predicate<ObjectFlyweight> filter, LogScanner.ObjectVisitor visitor) {
        LogScanner.scan(directory.head(head), LogScanner.Mode.RESYNC, (chainOffset, object) -> {
            if (filter.test(object)) {
                visitor.visit(chainOffset, object);
            }
        });
    }
}
