package io.erda.softrnic;

import io.erda.ffm.verbs.Verbs;
import java.lang.foreign.MemorySegment;
import java.util.ArrayList;
import java.util.List;

/**
 * The work requests one {@code struct ibv_qp_ex} collects between wr_start and wr_complete, as a provider builds
 * WQEs: each operation takes {@code qpx->wr_id} and {@code qpx->wr_flags} as they are when it is called, wr_set_sge
 * gives the last one its buffer. Calls out of order (an operation or SGE outside a batch, two SGEs) spoil the batch,
 * and its wr_complete fails with EINVAL. Only the QP's poster calls it (one thread, as verbs requires).
 */
final class ExtendedBatch {
    private final MemorySegment qpx;
    private final List<PostedSend> requests = new ArrayList<>();
    private boolean open;
    private boolean spoiled;

    ExtendedBatch(MemorySegment qpx) {
        this.qpx = qpx;
    }

    void start() {
        requests.clear();
        open = true;
        spoiled = false;
    }

    /** An operation; {@code swap} is the value of an ATOMIC_WRITE. */
    void add(int opcode, int rkey, long remoteAddress, long swap) {
        if (!open) {
            spoiled = true;
            return;
        }
        long wrId = (long) Verbs.ibv_qp_ex$wr_id.get(qpx, 0L);
        int flags = (int) Verbs.ibv_qp_ex$wr_flags.get(qpx, 0L);
        requests.add(new PostedSend(wrId, opcode, flags, 0, remoteAddress, rkey, 0, swap, List.of()));
    }

    void setSge(PostedSend.Sge sge) {
        if (!open || requests.isEmpty() || !requests.getLast().sges().isEmpty()) {
            spoiled = true;
            return;
        }
        PostedSend last = requests.removeLast();
        requests.add(new PostedSend(last.wrId(), last.opcode(), last.sendFlags(), last.immediate(), last.remoteAddress(),
                last.rkey(), last.compareAdd(), last.swap(), List.of(sge)));
    }

    /** The batch to execute, or null if it was spoiled or never started. */
    List<PostedSend> complete() {
        boolean ok = open && !spoiled;
        List<PostedSend> batch = List.copyOf(requests);
        abort();
        return ok ? batch : null;
    }

    void abort() {
        requests.clear();
        open = false;
        spoiled = false;
    }
}
