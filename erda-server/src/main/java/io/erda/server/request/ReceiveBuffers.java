package io.erda.server.request;

import io.erda.fabric.Fabric;
import io.erda.fabric.MemoryRegion;
import java.lang.foreign.Arena;

/**
 * Where a connection's posted receive buffers live: {@code count} buffers of {@code size} bytes in one
 * registered region. Erda connections use DRAM ({@link #dram}); Redo Logging connections a lane of the PM redo
 * log (the taxonomy's PM-RQWRB: a client's SEND lands in PM).
 */
public interface ReceiveBuffers extends AutoCloseable {
    /** Receive buffers of a connection in DRAM: how many requests its client may have outstanding. */
    int DRAM_SLOTS = 8;

    MemoryRegion region();

    int count();

    int size();

    /** Offset in {@link #region()} of buffer {@code slot}. */
    long offset(int slot);

    @Override
    void close();

    /**
     * {@link #DRAM_SLOTS} buffers of {@link Request#MAX_MESSAGE_LENGTH} bytes: anonymous memory registered for one
     * connection alone, freed on close.
     */
    static ReceiveBuffers dram(Fabric fabric) {
        return dram(fabric, Request.MAX_MESSAGE_LENGTH);
    }

    /**
     * {@link #DRAM_SLOTS} buffers of {@code size} bytes, as {@link #dram(Fabric)}: for a protocol whose requests carry
     * values (RDMP-KV's HERD_PUT).
     */
    static ReceiveBuffers dram(Fabric fabric, int size) {
        int count = DRAM_SLOTS;
        Arena arena = Arena.ofShared();
        MemoryRegion region = fabric.registerLocal(arena.allocate((long) count * size, 64));
        return new ReceiveBuffers() {
            @Override
            public MemoryRegion region() {
                return region;
            }

            @Override
            public int count() {
                return count;
            }

            @Override
            public int size() {
                return size;
            }

            @Override
            public long offset(int slot) {
                return (long) slot * size;
            }

            @Override
            public void close() {
                region.close();
                arena.close();
            }
        };
    }
}
