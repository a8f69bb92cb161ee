package io.erda.softrnic;

import io.erda.ffm.verbs.Verbs;
import java.lang.foreign.MemorySegment;

/**
 * A registration of a {@link SoftRnicDevice}: the memory behind {@code addr}, its keys and {@code IBV_ACCESS_*}
 * flags, the optional PM write-latency model (extra nanoseconds per 64-byte line written by a peer) and the optional
 * durable mirror, which every one-sided write or atomic placed here is copied into.
 */
final class SoftMemoryRegion {
    static final int CACHE_LINE = 64;

    final MemorySegment mr;
    final MemorySegment memory;
    final int lkey;
    final int rkey;
    final int access;
    volatile long writeDelayNanosPerLine;
    volatile MemorySegment mirror;

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
        if (m != null && length > 0) {
            MemorySegment.copy(memory, offset, m, offset, length);
        }
    }

    boolean allowsLocalWrite() {
        return allows(Verbs.IBV_ACCESS_LOCAL_WRITE);
    }
}
