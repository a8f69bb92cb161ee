package io.erda.softrnic;

import io.erda.ffm.verbs.Verbs;
import java.lang.foreign.MemorySegment;
import java.util.concurrent.ConcurrentLinkedQueue;

/** The completions of one {@code struct ibv_cq} of a {@link SoftRnicDevice}, handed out by poll_cq in ibv_wc layout. */
final class SoftCompletionQueue {
    private static final long STRIDE = Verbs.ibv_wc.byteSize();

    /** One {@code struct ibv_wc}; {@code immRaw} in network order, as the wire and the struct carry it. */
    record Entry(long wrId, int status, int opcode, int byteLength, int qpNum, int immRaw, int flags) {}

    private final ConcurrentLinkedQueue<Entry> entries = new ConcurrentLinkedQueue<>();

    void add(Entry entry) {
        entries.add(entry);
    }

    int poll(int max, MemorySegment wcPointer) {
        MemorySegment wc = wcPointer.reinterpret(STRIDE * Math.max(max, 0));
        int n = 0;
        while (n < max) {
            Entry e = entries.poll();
            if (e == null) {
                break;
            }
            long b = n * STRIDE;
            wc.asSlice(b, STRIDE).fill((byte) 0);
            Verbs.ibv_wc$wr_id.set(wc, b, e.wrId());
            Verbs.ibv_wc$status.set(wc, b, e.status());
            Verbs.ibv_wc$opcode.set(wc, b, e.opcode());
            Verbs.ibv_wc$byte_len.set(wc, b, e.byteLength());
            Verbs.ibv_wc$qp_num.set(wc, b, e.qpNum());
            Verbs.ibv_wc$imm_data.set(wc, b, e.immRaw());
            Verbs.ibv_wc$wc_flags.set(wc, b, e.flags());
            n++;
        }
        return n;
    }
}
