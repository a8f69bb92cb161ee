package io.erda.fabric;

/** Work request and completion opcodes, modelled on {@code ibv_wr_opcode} and {@code ibv_wc_opcode}. */
public enum Opcode {
    READ,
    WRITE,
    /** A WRITE that also consumes a posted receive at the target and delivers 32 bits of immediate data. */
    WRITE_WITH_IMM,
    SEND,
    /** 8-byte compare-and-swap on an 8-byte aligned remote word; the old value lands in the local buffer. */
    CAS,
    /** 8-byte fetch-and-add on an 8-byte aligned remote word; the old value lands in the local buffer. */
    FETCH_ADD,
    /**
     * 8-byte atomic write of an 8-byte aligned remote word (IBV_WR_ATOMIC_WRITE): the value comes from the request's
     * {@code swap}; no local buffer, nothing returned. Needs REMOTE_WRITE on the target region, as in the IBTA
     * memory placement extensions. A reader of the word sees the old or the new value, never a mix, and the write is
     * placed after every earlier WRITE of the connection (publish-when-complete across the fabric).
     */
    ATOMIC_WRITE,
    /**
     * Makes every earlier WRITE on the connection persistent at the target for the given remote range
     * (IBV_WR_FLUSH, placement type persistent). Providers without a native flush emulate it by a READ.
     */
    FLUSH,
    /** Completion of a posted receive consumed by a SEND. */
    RECV,
    /** Completion of a posted receive consumed by a WRITE_WITH_IMM (no data lands in the receive buffer). */
    RECV_WITH_IMM;

    /** True for the operations that touch the target's memory without its CPU. */
    public boolean isOneSided() {
        return this == READ || this == WRITE || this == WRITE_WITH_IMM || isAtomic() || this == FLUSH;
    }

    /** The 8-byte operations on an 8-byte aligned remote word: CAS, FETCH_ADD, ATOMIC_WRITE. */
    public boolean isAtomic() {
        return this == CAS || this == FETCH_ADD || this == ATOMIC_WRITE;
    }
}
