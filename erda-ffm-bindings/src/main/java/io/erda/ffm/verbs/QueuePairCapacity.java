package io.erda.ffm.verbs;

/** {@code struct ibv_qp_cap}: queue depths and scatter/gather limits requested for a QP. */
public record QueuePairCapacity(int maxSendWr, int maxRecvWr, int maxSendSge, int maxRecvSge, int maxInlineData) {
    public QueuePairCapacity {
        if (maxSendWr <= 0 || maxRecvWr <= 0 || maxSendSge <= 0 || maxRecvSge <= 0 || maxInlineData < 0) {
            throw new IllegalArgumentException("queue pair capacity must be positive: " + maxSendWr + " send WRs, "
                    + maxRecvWr + " recv WRs, " + maxSendSge + "/" + maxRecvSge + " SGEs, " + maxInlineData + " inline");
        }
    }

    public static QueuePairCapacity of(int sendDepth, int recvDepth) {
        return new QueuePairCapacity(sendDepth, recvDepth, 1, 1, 0);
    }
}
