package io.erda.fabric.shm;

import io.erda.fabric.Access;
import io.erda.fabric.DurableMirror;
import io.erda.fabric.emulated.RegionTable;
import java.nio.file.Path;
import java.util.Set;

/**
 * A region as the target publishes it for shm initiators: what {@link io.erda.fabric.RemoteRegion} says plus
 * where the bytes live (file and offset), the access flags the initiator checks, the write-latency model, the
 * counter slot the initiator accounts into, and the durable mirror's file, offset and lock word's offset
 * ({@code mirrorFile} null: none), which the initiator maps and copies one-sided writes into under the lock
 * when they are durable by its {@code mirrorDurability} ({@link io.erda.fabric.DurableMirror}).
 */
record ExportedRegion(int rkey, long address, long length, int accessBits, Path file, long fileOffset,
                      long writeDelayNanosPerCacheLine, int counterSlot, Path mirrorFile, long mirrorOffset,
                      long mirrorLockOffset, DurableMirror.Durability mirrorDurability) implements RegionTable.Entry {

    /** A region whose mirror, if any, takes writes as they are placed. */
    ExportedRegion(int rkey, long address, long length, int accessBits, Path file, long fileOffset,
                   long writeDelayNanosPerCacheLine, int counterSlot, Path mirrorFile, long mirrorOffset,
                   long mirrorLockOffset) {
        this(rkey, address, length, accessBits, file, fileOffset, writeDelayNanosPerCacheLine, counterSlot, mirrorFile,
                mirrorOffset, mirrorLockOffset, DurableMirror.Durability.ON_PLACEMENT);
    }

    static int accessBits(Set<Access> access) {
        int bits = 0;
        for (Access a : access) {
            bits |= 1 << a.ordinal();
        }
        return bits;
    }

    @Override
    public boolean allows(Access access) {
        return (accessBits & (1 << access.ordinal())) != 0;
    }

    /**
     * Component by component, as the record's own would, but written out: {@link PeerMemory} compares its mappings'
     * regions with a new snapshot's on the initiator's request thread, first when the target publishes a new region
     * (a spare log region, long after warm-up), and the generated equals bootstraps (spins classes) on its first call,
     * milliseconds on a PUT's path.
     */
    @Override
    public boolean equals(Object o) {
        return o instanceof ExportedRegion r && rkey == r.rkey && address == r.address && length == r.length
                && accessBits == r.accessBits && file.equals(r.file) && fileOffset == r.fileOffset
                && writeDelayNanosPerCacheLine == r.writeDelayNanosPerCacheLine && counterSlot == r.counterSlot
                && java.util.Objects.equals(mirrorFile, r.mirrorFile) && mirrorOffset == r.mirrorOffset
                && mirrorLockOffset == r.mirrorLockOffset && mirrorDurability == r.mirrorDurability;
    }

    @Override
    public int hashCode() {
        return java.util.Objects.hash(rkey, address, length, accessBits, file, fileOffset, writeDelayNanosPerCacheLine,
                counterSlot, mirrorFile, mirrorOffset, mirrorLockOffset, mirrorDurability);
    }
}
