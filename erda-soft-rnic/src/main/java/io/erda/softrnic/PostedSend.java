package io.erda.softrnic;

import io.erda.ffm.verbs.Verbs;
import java.lang.foreign.MemorySegment;
import java.util.ArrayList;
import java.util.List;

/**
 * One {@code struct ibv_send_wr} as a provider sees it, decoded from native memory. remoteAddress
 * and rkey come from {@code wr.atomic} for atomic opcodes and from {@code wr.rdma} otherwise.
 */
public record PostedSend(long wrId, int opcode, int sendFlags, int immediate, long remoteAddress, int rkey,
                         long compareAdd, long swap, List<Sge> sges) {

    /** {@code struct ibv_sge}. */
    public record Sge(long address, int length, int lkey) {}

    public boolean signaled() {
        return (sendFlags & Verbs.IBV_SEND_SIGNALED) != 0;
    }

    public boolean isAtomic() {
        return opcode == Verbs.IBV_WR_ATOMIC_CMP_AND_SWP || opcode == Verbs.IBV_WR_ATOMIC_FETCH_AND_ADD;
    }

    /** Follows {@code next} from {@code first} to NULL. */
    public static List<PostedSend> decodeChain(MemorySegment first) {
        List<PostedSend> out = new ArrayList<>();
        for (MemorySegment wr = first; !wr.equals(MemorySegment.NULL);
             wr = (MemorySegment) Verbs.ibv_send_wr$next.get(wr.reinterpret(Verbs.ibv_send_wr.byteSize()), 0L)) {
            out.add(decode(wr.reinterpret(Verbs.ibv_send_wr.byteSize())));
        }
        return out;
    }

    public static PostedSend decode(MemorySegment wr) {
        int opcode = (int) Verbs.ibv_send_wr$opcode.get(wr, 0L);
        boolean atomic = opcode == Verbs.IBV_WR_ATOMIC_CMP_AND_SWP || opcode == Verbs.IBV_WR_ATOMIC_FETCH_AND_ADD;
        long remote = atomic ? (long) Verbs.ibv_send_wr$wr$atomic$remote_addr.get(wr, 0L)
                : (long) Verbs.ibv_send_wr$wr$rdma$remote_addr.get(wr, 0L);
        int rkey = atomic ? (int) Verbs.ibv_send_wr$wr$atomic$rkey.get(wr, 0L)
                : (int) Verbs.ibv_send_wr$wr$rdma$rkey.get(wr, 0L);
        long compareAdd = atomic ? (long) Verbs.ibv_send_wr$wr$atomic$compare_add.get(wr, 0L) : 0L;
        long swap = atomic ? (long) Verbs.ibv_send_wr$wr$atomic$swap.get(wr, 0L) : 0L;
        return new PostedSend((long) Verbs.ibv_send_wr$wr_id.get(wr, 0L), opcode,
                (int) Verbs.ibv_send_wr$send_flags.get(wr, 0L),
                Integer.reverseBytes((int) Verbs.ibv_send_wr$imm_data.get(wr, 0L)), remote, rkey, compareAdd, swap,
                sges((MemorySegment) Verbs.ibv_send_wr$sg_list.get(wr, 0L), (int) Verbs.ibv_send_wr$num_sge.get(wr, 0L)));
    }

    static List<Sge> sges(MemorySegment list, int count) {
        List<Sge> sges = new ArrayList<>(count);
        MemorySegment array = list.reinterpret(Verbs.ibv_sge.byteSize() * count);
        for (int i = 0; i < count; i++) {
            long base = i * Verbs.ibv_sge.byteSize();
            sges.add(new Sge((long) Verbs.ibv_sge$addr.get(array, base), (int) Verbs.ibv_sge$length.get(array, base),
                    (int) Verbs.ibv_sge$lkey.get(array, base)));
        }
        return List.copyOf(sges);
    }
}
