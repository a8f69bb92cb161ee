package io.erda.core.log;

import io.erda.core.pm.PmRegion;
import io.erda.protocol.memory.LogAddress;
import io.erda.protocol.memory.LogGeometry;
import io.erda.protocol.memory.ObjectCheck;
import io.erda.protocol.memory.ObjectFlyweight;
import io.erda.protocol.memory.ObjectLayout;
import java.lang.foreign.MemorySegment;
import java.util.List;

/**
 * Forward scan of a head's objects for verify, rebuild and the cleaner.
 *
 * <p>Each segment is walked from its first object position up to the region's high-water mark.
 * Valid objects are consecutive, so {@link Mode#STOP_AT_INVALID} ends a segment at the first
 * position that does not validate: exact when no reservation is torn, but a torn object (client
 * died mid-WRITE) hides every later object of its segment. {@link Mode#RESYNC} instead steps 8 bytes
 * at a time past an invalid position until something validates again. Limit of resync: bytes
 * inside a torn region that happen to form a CRC-valid object (e.g. a value that embeds an encoded
 * object, or old bytes of a recycled region not zeroed, which docs/ARCHITECTURE.md,
 * [recycled-memory], forbids) would be reported; a rebuild should prefer, for each key, the version
 * the table or the newest-offset rule designates.
 */
public final class LogScanner {
    /** How a scan treats an invalid position inside a segment. */
    public enum Mode { STOP_AT_INVALID, RESYNC }

    /** Receives each valid object; the flyweight is reused between calls. */
    @FunctionalInterface
    public interface ObjectVisitor {
        void visit(long chainOffset, ObjectFlyweight object);
    }

    private LogScanner() {
    }

    /**
     * Scans every segment of {@code head} in chain order, the current chain first, then the new chain
     * while the head is being cleaned; returns the number of valid objects visited.
     */
    public static long scan(LogHead head, Mode mode, ObjectVisitor visitor) {
        long visited = 0;
        for (LogChain chain : new LogChain[] {head.currentChain(), head.newChain()}) {
            if (chain != null) {
                visited += scan(chain, head.geometry(), 0, Long.MAX_VALUE, mode, visitor);
            }
        }
        return visited;
    }

    /**
     * Scans the objects of {@code chain} between logical offsets {@code from} (an object boundary or a
     * segment start) and {@code to}, each region up to its high-water mark; the visitor gets physical
     * chain offsets. Returns the number of valid objects visited.
     */
    public static long scan(LogChain chain, LogGeometry geometry, long from, long to, Mode mode, ObjectVisitor visitor) {
        ObjectFlyweight object = new ObjectFlyweight();
        long regionSize = geometry.regionSize();
        long visited = 0;
        List<PmRegion> regions = chain.regions();
        for (int index = Math.max(0, LogAddress.regionIndexForOffset(from, regionSize)); index < regions.size(); index++) {
            long regionStart = LogAddress.chainOffset(index, 0, regionSize);
            if (regionStart >= to) {
                break;
            }
            PmRegion region = regions.get(index);
            MemorySegment data = region.data();
            long limit = Math.min(LogHead.highWater(region), to - regionStart);
            long first = Math.max(0, from - regionStart);
            for (long segment = geometry.segmentStart(first); segment < limit; segment += geometry.segmentSize()) {
                long end = Math.min(segment + geometry.segmentSize(), limit);
                long position = Math.max(segment + LogGeometry.SEGMENT_HEADER_LENGTH, first);
                while (position + ObjectLayout.HEADER_LENGTH <= end) {
                    ObjectCheck check = object.wrap(data, position).validate(end - position, null);
                    if (check.isValid()) {
                        visitor.visit(chain.physical(regionStart + position), object);
                        visited++;
                        position += object.totalLength();
                    } else if (mode == Mode.RESYNC) {
                        position += ObjectLayout.ALIGNMENT;
                    } else {
                        break;
                    }
                }
            }
        }
        return visited;
    }
}
