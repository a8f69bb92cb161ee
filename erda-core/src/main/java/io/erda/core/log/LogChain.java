package io.erda.core.log;

import io.erda.core.pm.PmRegion;
import io.erda.protocol.memory.LogAddress;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

/**
 * One chain of regions of a head (paper §3.2.2, Fig. 5): the regions in chain order, each placed at
 * a <em>slot</em> of the head's 16 GiB offset space (slot {@code s} covers chain offsets
 * {@code [s*regionSize, (s+1)*regionSize)}).
 *
 * <p><b>Why slots</b> (log cleaning, paper §4.4). While a head is cleaned it has two chains, the old
 * one and the new one, and entries point into both. Each slot belongs to at most one chain at a
 * time, so an offset alone says which chain and region it lies in: entries, clients and recovery
 * need no cleaning state to resolve it. A chain's regions need not be at consecutive slots (the new
 * chain takes free slots, and the old chain may still grow during the merge).
 *
 * <p><b>Logical offsets</b> count bytes along the chain: region at position {@code p} covers logical
 * {@code [p*regionSize, (p+1)*regionSize)}. Reservation and scans work on logical offsets; entries
 * and clients see physical chain offsets. A chain that was never cleaned sits at slots 0, 1, ... and
 * its logical and physical offsets coincide.
 *
 * <p>Threads: mutated only by its {@link LogHead} under the head's monitor; readers may run anywhere.
 */
public final class LogChain {
    private final int generation;
    private final long regionSize;
    private final List<Integer> slots = new CopyOnWriteArrayList<>();
    private final List<PmRegion> regions = new CopyOnWriteArrayList<>();
    /**
     * Each slot's position in chain order, -1 for a slot not in this chain; copy-on-write like the lists. The cleaner
     * asks whether an offset lies in the old chain several times per entry of the table, under the store lock: a
     * search of the slot list took a fifth of its switch.
     */
    private volatile int[] positionBySlot = new int[0];
    /** Logical offset of the next reservation (guarded by the head). */
    private long tail;

    LogChain(int generation, long regionSize, List<Integer> slots, List<PmRegion> regions) {
        if (slots.size() != regions.size() || slots.isEmpty()) {
            throw new IllegalArgumentException("chain of generation " + generation + " with " + slots.size() + " slots and "
                    + regions.size() + " regions");
        }
        this.generation = generation;
        this.regionSize = regionSize;
        for (int i = 0; i < slots.size(); i++) {
            append(slots.get(i), regions.get(i));
        }
        int last = regions.size() - 1;
        this.tail = LogAddress.chainOffset(last, LogHead.highWater(regions.get(last)), regionSize);
    }

    /** Generation of the chain: 0 for a new head, +1 for each cleaning. Region files record it. */
    public int generation() {
        return generation;
    }

    /** Regions in chain order. */
    public List<PmRegion> regions() {
        return List.copyOf(regions);
    }

    /** The region at {@code position} in chain order (a reservation's, without copying the list as {@link #regions}). */
    public PmRegion region(int position) {
        return regions.get(position);
    }

    /** Slots of the regions, in chain order. */
    public List<Integer> slots() {
        return List.copyOf(slots);
    }

    public int size() {
        return regions.size();
    }

    public boolean containsSlot(int slot) {
        return position(slot) >= 0;
    }

    private int position(int slot) {
        int[] bySlot = positionBySlot;
        return slot >= 0 && slot < bySlot.length ? bySlot[slot] : -1;
    }

    /** Whether {@code chainOffset} (physical) lies in one of this chain's regions. */
    public boolean contains(long chainOffset) {
        return chainOffset >= 0 && containsSlot(LogAddress.regionIndexForOffset(chainOffset, regionSize));
    }

    /** Logical offset of the next reservation: the bytes the chain occupies, slack included. */
    public synchronized long logicalTail() {
        return tail;
    }

    synchronized void setLogicalTail(long tail) {
        this.tail = tail;
    }

    /** Physical chain offset of the tail (the end of the last region when the tail is exactly there). */
    public long tail() {
        long logical = logicalTail();
        int position = LogAddress.regionIndexForOffset(logical, regionSize);
        return position == regions.size()
                ? LogAddress.chainOffset(slots.get(position - 1) + 1, 0, regionSize)
                : physical(logical);
    }

    /** Physical chain offset of a logical one inside the chain. */
    public long physical(long logical) {
        int position = LogAddress.regionIndexForOffset(logical, regionSize);
        if (logical < 0 || position >= slots.size()) {
            throw new IllegalArgumentException("logical offset " + logical + " outside chain of generation " + generation
                    + " (" + slots.size() + " regions of " + regionSize + " bytes)");
        }
        return LogAddress.chainOffset(slots.get(position), LogAddress.offsetInRegion(logical, regionSize), regionSize);
    }

    /** Logical offset of a physical chain offset, or -1 if it is not in this chain. */
    public long logical(long chainOffset) {
        int position = chainOffset < 0 ? -1 : position(LogAddress.regionIndexForOffset(chainOffset, regionSize));
        return position < 0 ? -1 : LogAddress.chainOffset(position, LogAddress.offsetInRegion(chainOffset, regionSize), regionSize);
    }

    void append(int slot, PmRegion region) {
        int[] bySlot = java.util.Arrays.copyOf(positionBySlot, Math.max(positionBySlot.length, slot + 1));
        java.util.Arrays.fill(bySlot, positionBySlot.length, bySlot.length, -1);
        bySlot[slot] = regions.size();
        slots.add(slot);
        regions.add(region);
        positionBySlot = bySlot;
    }

    @Override
    public String toString() {
        return "LogChain[generation " + generation + ", slots " + slots + ", logical tail " + logicalTail() + "]";
    }
}
