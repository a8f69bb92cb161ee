package io.erda.client;

import io.erda.fabric.Fabric;
import io.erda.fabric.MemoryRegion;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;

/**
 * Registered local memory that grows on demand (READ destinations, objects to WRITE, messages). Growing
 * re-registers, so it may only happen while no request uses the buffer: connections are synchronous, so between
 * two requests is always such a time.
 */
final class LocalBuffer implements AutoCloseable {
    private static final long ALIGNMENT = 64;

    private final Fabric fabric;
    private Arena arena;
    private MemoryRegion region;

    LocalBuffer(Fabric fabric, long size) {
        this.fabric = fabric;
        allocate(size);
    }

    MemoryRegion region() {
        return region;
    }

    MemorySegment segment() {
        return region.segment();
    }

    /** Makes the buffer at least {@code size} bytes (contents are not kept). */
    void ensure(long size) {
        if (size > region.length()) {
            close();
            allocate(Long.highestOneBit(size - 1) << 1);
        }
    }

    private void allocate(long size) {
        Arena a = Arena.ofShared();
        try {
            region = fabric.registerLocal(a.allocate(size, ALIGNMENT));
            arena = a;
        } catch (RuntimeException e) {
            a.close();
            throw e;
        }
    }

    @Override
    public void close() {
        region.close();
        arena.close();
    }
}
