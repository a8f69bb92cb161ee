package io.erda.core.log;

import io.erda.core.layout.LogAddress;
import io.erda.core.layout.ObjectCheck;
import io.erda.core.layout.ObjectFlyweight;
import io.erda.core.layout.ObjectLayout;
import io.erda.core.pm.PmRegion;
import java.lang.foreign.MemorySegment;

/**
 * Forward scan of a head's objects for verify, rebuild and the cleaner.
 *
 * <p>Each segment is walked from its first object position up to the region's high-water mark.
 * Valid objects are consecutive, so {@link Mode#STOP_AT_INVALID} ends a segment at the first
 * position that does not validate: exact when no reservation is torn, but a torn object (client
 * died mid-WRITE) hides every later object of its segment. {@link Mode#RESYNC} instead steps 8 bytes
 * at a time past an invalid position until something validates again. Limit of resync: bytes
 * inside a torn region that happen to form a CRC-valid object (e.g. a value that embeds an encoded
 * object, or old bytes of a recycled region not zeroed, which rule 5 forbids) would be reported; a
 * rebuild should prefer, for each key, the version the table or the newest-offset rule designates.
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

    /** Scans every segment of {@code head} in chain order; returns the number of valid objects visited. */
    public static long scan(LogHead head, Mode mode, ObjectVisitor visitor) {
        LogGeometry geometry = head.geometry();
        ObjectFlyweight object = new ObjectFlyweight();
        long visited = 0;
        var regions = head.regions();
        for (int index = 0; index < regions.size(); index++) {
            PmRegion region = regions.get(index);
            MemorySegment data = region.data();
            long limit = LogHead.highWater(region);
            for (long segment = 0; segment < limit; segment += geometry.segmentSize()) {
                long end = Math.min(segment + geometry.segmentSize(), limit);
                long position = segment + LogGeometry.SEGMENT_HEADER_LENGTH;
                while (position + ObjectLayout.HEADER_LENGTH <= end) {
                    ObjectCheck check = object.wrap(data, position).validate(end - position, null);
                    if (check.isValid()) {
                        visitor.visit(LogAddress.chainOffset(index, position, geometry.regionSize()), object);
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
