package io.erda.fabric.shm;

import io.erda.fabric.Access;
import io.erda.fabric.soft.RegionTable;
import java.nio.file.Path;
import java.util.Set;

/**
 * A region as the target publishes it for shm initiators: what {@link io.erda.fabric.RemoteRegion} says plus
 * where the bytes live (file and offset), the access flags the initiator checks, the write-latency model, the
 * counter slot the initiator accounts into, and the durable mirror's file, offset and lock word's offset
 * ({@code mirrorFile} null: none), which the initiator maps and copies one-sided writes into under the lock
 * ({@link io.erda.fabric.DurableMirror}).
 */
record ExportedRegion(int rkey, long address, long length, int accessBits, Path file, long fileOffset,
                      long writeDelayNanosPerCacheLine, int counterSlot, Path mirrorFile, long mirrorOffset,
                      long mirrorLockOffset) implements RegionTable.Entry {

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
}
