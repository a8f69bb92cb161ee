package io.erda.fabric.shm;

import io.erda.fabric.DurableMirror;
import io.erda.fabric.RegisterOptions;
import io.erda.fabric.emulated.EmulatedRegion;
import java.lang.foreign.MemorySegment;

/**
 * A region registered with an shm fabric. Regions with remote access are exported (file, offset, flags, counter
 * slot) so initiators on this host can map and access them; local-only regions are only usable as local buffers.
 */
public final class ShmMemoryRegion extends EmulatedRegion<ShmFabric> {
    static final int NOT_EXPORTED = -1;

    private final int counterSlot;
    private volatile long[] finalCounters;

    ShmMemoryRegion(ShmFabric fabric, MemorySegment segment, RegisterOptions options, int key, int counterSlot) {
        super(fabric, segment, options, key);
        this.counterSlot = counterSlot;
    }

    boolean exported() {
        return counterSlot != NOT_EXPORTED;
    }

    int counterSlot() {
        return counterSlot;
    }

    ExportedRegion export() {
        RegisterOptions options = options();
        DurableMirror mirror = options.durableMirror();
        return new ExportedRegion(rkey(), address(), length(), ExportedRegion.accessBits(options.access()),
                options.backing().file().toAbsolutePath(), options.backing().fileOffset(),
                options.writeDelayNanosPerCacheLine(), counterSlot,
                mirror == null ? null : mirror.backing().file().toAbsolutePath(),
                mirror == null ? 0 : mirror.backing().fileOffset(), mirror == null ? 0 : mirror.lockFileOffset(),
                mirror == null ? DurableMirror.Durability.ON_PLACEMENT : mirror.durability());
    }

    @Override
    public long remoteBytesWritten() {
        return counter(CountersFile.BYTES_WRITTEN_OFFSET);
    }

    /** Bytes shm initiators READ from this region. */
    public long remoteBytesRead() {
        return counter(CountersFile.BYTES_READ_OFFSET);
    }

    /** Cache lines for which initiators applied the write-latency model. */
    public long delayedCacheLines() {
        return counter(CountersFile.LINES_DELAYED_OFFSET);
    }

    private long counter(int field) {
        if (!exported()) {
            return 0;
        }
        long[] last = finalCounters;
        if (last != null) {
            return last[field / 8];
        }
        return fabric().counter(counterSlot, field);
    }

    /** Keeps the counters' last values once the shared counters file is gone. */
    void freezeCounters() {
        if (exported() && finalCounters == null) {
            ShmFabric fabric = fabric();
            finalCounters = new long[] {fabric.counter(counterSlot, CountersFile.BYTES_WRITTEN_OFFSET),
                fabric.counter(counterSlot, CountersFile.BYTES_READ_OFFSET),
                fabric.counter(counterSlot, CountersFile.LINES_DELAYED_OFFSET)};
        }
    }

    @Override
    public void close() {
        if (markClosed()) {
            fabric().deregister(this);
        }
    }

    @Override
    public String toString() {
        return "ShmMemoryRegion[rkey=0x" + Integer.toHexString(rkey()) + ", " + length() + " bytes"
                + (exported() ? ", " + options().backing() : ", local") + "]";
    }
}
