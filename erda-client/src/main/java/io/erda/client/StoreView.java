package io.erda.client;

import io.erda.protocol.HeadArray;
import io.erda.protocol.RegionDescriptor;
import io.erda.protocol.StoreInfo;
import io.erda.protocol.memory.LogAddress;
import io.erda.protocol.memory.LogGeometry;
import io.erda.protocol.memory.TableGeometry;

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
    private int[] generations;

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

    /** The server's generation of {@code head}'s entry in the head array: bumped by every change of it. */
    synchronized int generation(int head) {
        return head >= 0 && head < generations.length ? generations[head] : -1;
    }

    /**
     * Takes the heads of {@code heads} that are newer than the cached ones. Per head, the generation decides: a HEADS
     * reply built before a HEAD_STATE may arrive after it, and must not bring back the older state.
     */
    synchronized void updateHeads(HeadArray heads) {
        int max = regionsByHead == null ? 0 : regionsByHead.length;
        for (HeadArray.Head h : heads.heads()) {
            max = Math.max(max, h.id() + 1);
        }
        RegionDescriptor[][] byHead = new RegionDescriptor[max][];
        boolean[] flags = new boolean[max];
        int[] gens = new int[max];
        if (regionsByHead != null) {
            System.arraycopy(regionsByHead, 0, byHead, 0, regionsByHead.length);
            System.arraycopy(cleaning, 0, flags, 0, cleaning.length);
            System.arraycopy(generations, 0, gens, 0, generations.length);
        }
        for (HeadArray.Head h : heads.heads()) {
            if (byHead[h.id()] == null || h.generation() - gens[h.id()] >= 0) {
                byHead[h.id()] = h.regions().toArray(RegionDescriptor[]::new);
                flags[h.id()] = h.cleaning();
                gens[h.id()] = h.generation();
            }
        }
        regionsByHead = byHead;
        cleaning = flags;
        generations = gens;
    }
}
