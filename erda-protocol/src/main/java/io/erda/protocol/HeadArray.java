package io.erda.protocol;

import java.lang.foreign.MemorySegment;
import java.util.ArrayList;
import java.util.List;

import static io.erda.protocol.MessageHeader.INT;
import static io.erda.protocol.MessageHeader.SHORT;

/**
 * The head array a client caches (paper §3.2.2, Fig. 5): for every head, the regions of its chain in chain order,
 * each with its remote address and rkey. Region {@code i} of a head covers chain offsets
 * {@code [i * regionSize, (i + 1) * regionSize)}.
 *
 * <pre>
 * array:  head count (u16) | reserved (u16) | reserved (u32) | head ...
 * head:   head id (u16) | flags (u16, bit 0: being cleaned) | generation (u32) | region count (u32) | reserved (u32)
 *         | region descriptor (24 bytes) ...
 * </pre>
 */
public record HeadArray(List<Head> heads) {
    public static final int HEADER_LENGTH = 8;
    public static final int HEAD_HEADER_LENGTH = 16;
    public static final int FLAG_CLEANING = 1;

    /**
     * One head.
     *
     * @param id         head id
     * @param generation bumped whenever the chain is replaced (cleaning switch), so clients can tell a stale cache
     * @param cleaning   while true, clients use two-sided requests for this head (paper §4.4)
     * @param regions    the chain, in order
     */
    public record Head(int id, int generation, boolean cleaning, List<RegionDescriptor> regions) {
        public Head {
            regions = List.copyOf(regions);
        }
    }

    public HeadArray {
        heads = List.copyOf(heads);
    }

    public int encodedLength() {
        int n = HEADER_LENGTH;
        for (Head h : heads) {
            n += HEAD_HEADER_LENGTH + h.regions().size() * RegionDescriptor.LENGTH;
        }
        return n;
    }

    public int encode(MemorySegment s, long offset) {
        s.set(SHORT, offset, (short) heads.size());
        s.set(SHORT, offset + 2, (short) 0);
        s.set(INT, offset + 4, 0);
        long p = offset + HEADER_LENGTH;
        for (Head h : heads) {
            s.set(SHORT, p, (short) h.id());
            s.set(SHORT, p + 2, (short) (h.cleaning() ? FLAG_CLEANING : 0));
            s.set(INT, p + 4, h.generation());
            s.set(INT, p + 8, h.regions().size());
            s.set(INT, p + 12, 0);
            p += HEAD_HEADER_LENGTH;
            for (RegionDescriptor r : h.regions()) {
                p += r.encode(s, p);
            }
        }
        return (int) (p - offset);
    }

    public static HeadArray decode(MemorySegment s, long offset, int available) {
        Body.require("head array", HEADER_LENGTH, available);
        int count = s.get(SHORT, offset) & 0xFFFF;
        long p = offset + HEADER_LENGTH;
        long end = offset + available;
        List<Head> heads = new ArrayList<>(count);
        for (int i = 0; i < count; i++) {
            Body.require("head " + i, p + HEAD_HEADER_LENGTH - offset, available);
            int id = s.get(SHORT, p) & 0xFFFF;
            int flags = s.get(SHORT, p + 2) & 0xFFFF;
            int generation = s.get(INT, p + 4);
            int regionCount = Body.nonNegative("region count of head " + id, s.get(INT, p + 8),
                    (int) ((end - p - HEAD_HEADER_LENGTH) / RegionDescriptor.LENGTH));
            p += HEAD_HEADER_LENGTH;
            List<RegionDescriptor> regions = new ArrayList<>(regionCount);
            for (int r = 0; r < regionCount; r++) {
                regions.add(RegionDescriptor.decode(s, p));
                p += RegionDescriptor.LENGTH;
            }
            heads.add(new Head(id, generation, (flags & FLAG_CLEANING) != 0, regions));
        }
        return new HeadArray(heads);
    }
}
