package io.erda.softrnic;

import io.erda.ffm.verbs.Verbs;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.VarHandle;

/**
 * A registration of a {@link SoftRnicDevice}: the memory behind {@code addr}, its keys and {@code IBV_ACCESS_*}
 * flags, the optional PM write-latency model (extra nanoseconds per 64-byte line written by a peer) and the optional
 * durable mirror, which every one-sided write or atomic placed here is copied into under the mirror's lock word.
 */
final class SoftMemoryRegion {
    static final int CACHE_LINE = 64;
    private static final VarHandle LOCK = ValueLayout.JAVA_LONG.varHandle();

    final MemorySegment mr;
    final MemorySegment memory;
    final int lkey;
    final int rkey;
    final int access;
    volatile long writeDelayNanosPerLine;
    volatile MemorySegment mirror;
    /** The mirror's lock word; set before {@link #mirror}. */
    volatile MemorySegment mirrorLock;

    SoftMemoryRegion(MemorySegment mr, MemorySegment memory, int lkey, int rkey, int access) {
        this.mr = mr;
        this.memory = memory;
        this.lkey = lkey;
        this.rkey = rkey;
        this.access = access;
    }

    boolean allows(int flag) {
        return (access & flag) != 0;
    }

    /** Offset of [address, address + length) in this region, or -1 if it does not lie inside (overflow-safe). */
    long offsetOf(long address, long length) {
        long offset = address - memory.address();
        long size = memory.byteSize();
        if (length < 0 || offset < 0 || offset > size || length > size - offset) {
            return -1;
        }
        return offset;
    }

    long writeDelayNanos(long length) {
        long lines = (length + CACHE_LINE - 1) / CACHE_LINE;
        return lines * writeDelayNanosPerLine;
    }

    /** Copies {@code [offset, offset+length)}, just placed, into the durable mirror if there is one. */
    void mirror(long offset, long length) {
        MemorySegment m = mirror;
        if (m == null || length <= 0) {
            return;
        }
        // the mirror owner's spin lock (io.erda.fabric.DurableMirror: CAS 0 to 1, store 0; a dead holder's is taken
        // over after a second), so the owner's persists and these copies reach the mirror in the order of the bytes
        long giveUp = System.nanoTime() + 1_000_000_000L;
        while (!LOCK.compareAndSet(mirrorLock, 0L, 0L, 1L) && System.nanoTime() - giveUp < 0) {
            Thread.onSpinWait();
        }
        try {
            MemorySegment.copy(memory, offset, m, offset, length);
        } finally {
            LOCK.setVolatile(mirrorLock, 0L, 0L);
        }
    }

    boolean allowsLocalWrite() {
        return allows(Verbs.IBV_ACCESS_LOCAL_WRITE);
    }
}
