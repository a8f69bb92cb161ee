package io.erda.client;

import io.erda.core.layout.LogAddress;
import io.erda.core.log.LogGeometry;
import io.erda.core.table.TableGeometry;
import io.erda.core.wire.HeadArray;
import io.erda.core.wire.RegionDescriptor;
import io.erda.core.wire.StoreInfo;

/**
 * What one connection knows of the store from its HELLO: table and stripe addresses, geometry, the cached head
 * array (paper §3.3: the server sends it once the connection is established). Maps the hash-table ranges of
 * {@link TableGeometry} and chain offsets ({@link LogAddress}) to remote addresses.
 */
final class StoreView {
    private final StoreInfo info;
    private final TableGeometry table;
    private RegionDescriptor[][] regionsByHead;
    private boolean[] cleaning;

    StoreView(StoreInfo info) {
        this.info = info;
        // tableBuckets counts the H-1 overflow buckets after the home buckets
        this.table = new TableGeometry(info.tableBuckets() - info.neighbourhood() + 1, info.neighbourhood(), info.stripeBuckets());
        updateHeads(info.heads());
    }

    StoreInfo info() {
        return info;
    }

    TableGeometry table() {
        return table;
    }

    /** Remote address of the neighbourhood window of {@code home}: the table descriptor points at bucket 0. */
    long windowAddress(long home) {
        return info.table().address() + table.windowOffset(home);
    }

    /** Remote address of the stripe versions covering the window: the stripes descriptor points at stripe 0's word. */
    long windowVersionsAddress(long home) {
        return info.stripes().address() + table.windowVersionsOffset(home) - table.stripeVersionsOffset();
    }

    /** Largest object a segment holds (an object never spans two). */
    long maxObjectLength() {
        return info.segmentSize() - LogGeometry.SEGMENT_HEADER_LENGTH;
    }

    /** Bytes from {@code chainOffset} to the end of its segment: no object read needs more. */
    long bytesToSegmentEnd(long chainOffset) {
        return info.segmentSize() - chainOffset % info.segmentSize();
    }

    /** The region holding {@code chainOffset} of {@code head}, or null if the cached head array does not know it. */
    synchronized RegionDescriptor region(int head, long chainOffset) {
        if (head < 0 || head >= regionsByHead.length || regionsByHead[head] == null) {
            return null;
        }
        int index = LogAddress.regionIndexForOffset(chainOffset, info.regionSize());
        RegionDescriptor[] regions = regionsByHead[head];
        // a zero-length descriptor is a slot the cleaner freed (its old chain was retired): no region there
        return index < regions.length && regions[index].length() > 0 ? regions[index] : null;
    }

    /** Remote address of {@code chainOffset} inside {@code region}. */
    long address(RegionDescriptor region, long chainOffset) {
        return region.address() + LogAddress.offsetInRegion(chainOffset, info.regionSize());
    }

    /** While a head is being cleaned its clients use two-sided requests (paper §4.4). */
    synchronized boolean isCleaning(int head) {
        return head >= 0 && head < cleaning.length && cleaning[head];
    }

    synchronized void updateHeads(HeadArray heads) {
        int max = 0;
        for (HeadArray.Head h : heads.heads()) {
            max = Math.max(max, h.id() + 1);
        }
        RegionDescriptor[][] byHead = new RegionDescriptor[max][];
        boolean[] flags = new boolean[max];
        for (HeadArray.Head h : heads.heads()) {
            byHead[h.id()] = h.regions().toArray(RegionDescriptor[]::new);
            flags[h.id()] = h.cleaning();
        }
        regionsByHead = byHead;
        cleaning = flags;
    }
}
