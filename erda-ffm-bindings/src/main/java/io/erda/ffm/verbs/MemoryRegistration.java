package io.erda.ffm.verbs;

import java.lang.foreign.MemorySegment;

/** {@code struct ibv_mr *}: registered memory with its local and remote keys. */
public final class MemoryRegistration implements AutoCloseable {
    private final VerbsLibrary verbs;
    private final MemorySegment mr;
    private final MemorySegment memory;

    MemoryRegistration(VerbsLibrary verbs, MemorySegment mr, MemorySegment memory) {
        this.verbs = verbs;
        this.mr = mr;
        this.memory = memory;
    }

    public MemorySegment segment() {
        return mr;
    }

    /** The registered memory itself. */
    public MemorySegment memory() {
        return memory;
    }

    public int lkey() {
        return (int) Verbs.ibv_mr$lkey.get(mr, 0L);
    }

    public int rkey() {
        return (int) Verbs.ibv_mr$rkey.get(mr, 0L);
    }

    /** The start address as the provider recorded it (what a peer uses as remote_addr). */
    public long address() {
        return ((MemorySegment) Verbs.ibv_mr$addr.get(mr, 0L)).address();
    }

    public long length() {
        return (long) Verbs.ibv_mr$length.get(mr, 0L);
    }

    @Override
    public void close() {
        verbs.deregMr(mr);
    }
}
