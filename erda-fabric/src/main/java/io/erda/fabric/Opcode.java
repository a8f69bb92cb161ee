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
        return this == READ || this == WRITE || this == WRITE_WITH_IMM || this == CAS || this == FETCH_ADD || this == FLUSH;
    }

    public boolean isAtomic() {
        return this == CAS || this == FETCH_ADD;
    }
}
