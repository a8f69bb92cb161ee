package io.erda.softrnic;

import io.erda.ffm.verbs.Verbs;
import java.lang.foreign.MemorySegment;
import java.util.ArrayList;
import java.util.List;

/** One {@code struct ibv_recv_wr} as a provider sees it. */
public record PostedReceive(long wrId, List<PostedSend.Sge> sges) {
    public static List<PostedReceive> decodeChain(MemorySegment first) {
        List<PostedReceive> out = new ArrayList<>();
        for (MemorySegment wr = first; !wr.equals(MemorySegment.NULL);
             wr = (MemorySegment) Verbs.ibv_recv_wr$next.get(wr.reinterpret(Verbs.ibv_recv_wr.byteSize()), 0L)) {
            MemorySegment w = wr.reinterpret(Verbs.ibv_recv_wr.byteSize());
            out.add(new PostedReceive((long) Verbs.ibv_recv_wr$wr_id.get(w, 0L),
                    PostedSend.sges((MemorySegment) Verbs.ibv_recv_wr$sg_list.get(w, 0L),
                            (int) Verbs.ibv_recv_wr$num_sge.get(w, 0L))));
        }
        return out;
    }
}
