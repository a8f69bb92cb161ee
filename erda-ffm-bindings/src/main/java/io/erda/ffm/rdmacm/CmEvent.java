package io.erda.ffm.rdmacm;

import java.lang.foreign.MemorySegment;

/**
 * A {@code struct rdma_cm_event} decoded; {@code segment} stays valid until acknowledged.
 *
 * @param type   {@code RdmaCma.RDMA_CM_EVENT_*}
 * @param id     the cm_id the event is for (on CONNECT_REQUEST: the new id of the connection)
 * @param status 0 or a negative errno for error events
 */
public record CmEvent(MemorySegment segment, int type, MemorySegment id, MemorySegment listenId, int status,
                      int remoteQpNum, byte[] privateData) {

    static CmEvent decode(MemorySegment event) {
        MemorySegment data = (MemorySegment) RdmaCma.rdma_cm_event$param$conn$private_data.get(event, 0L);
        int length = Byte.toUnsignedInt((byte) RdmaCma.rdma_cm_event$param$conn$private_data_len.get(event, 0L));
        byte[] privateData = data.equals(MemorySegment.NULL) ? new byte[0]
                : data.reinterpret(length).toArray(java.lang.foreign.ValueLayout.JAVA_BYTE);
        return new CmEvent(event, (int) RdmaCma.rdma_cm_event$event.get(event, 0L),
                ((MemorySegment) RdmaCma.rdma_cm_event$id.get(event, 0L)).reinterpret(RdmaCma.rdma_cm_id.byteSize()),
                (MemorySegment) RdmaCma.rdma_cm_event$listen_id.get(event, 0L),
                (int) RdmaCma.rdma_cm_event$status.get(event, 0L),
                (int) RdmaCma.rdma_cm_event$param$conn$qp_num.get(event, 0L), privateData);
    }
}
