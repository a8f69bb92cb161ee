package io.erda.fabric;

/**
 * A work completion ({@code ibv_wc}).
 *
 * @param wrId       the work request's id
 * @param opcode     what completed (RECV / RECV_WITH_IMM for receives)
 * @param status     SUCCESS or why not
 * @param byteLength bytes received (receives) or transferred
 * @param immData    immediate data of a WRITE_WITH_IMM (valid when {@code hasImm})
 * @param hasImm     whether {@code immData} is meaningful
 * @param endpoint   the endpoint the request was posted on (a CQ may be shared by many endpoints)
 * @param detail     provider's explanation of an error (for example "rkey 0x1f unknown"), null on success
 */
public record Completion(long wrId, Opcode opcode, Status status, int byteLength, int immData, boolean hasImm,
                         Endpoint endpoint, String detail) {

    /**
     * The words a provider puts in a flushed completion's detail when the connection broke because the peer closed
     * it in order (it closed its endpoint or its process exited): the one reason for a flush that is not news.
     */
    public static final String PEER_CLOSED = "the peer closed the connection";

    public static Completion success(long wrId, Opcode opcode, int byteLength, Endpoint endpoint) {
        return new Completion(wrId, opcode, Status.SUCCESS, byteLength, 0, false, endpoint, null);
    }

    public static Completion error(long wrId, Opcode opcode, Status status, Endpoint endpoint, String detail) {
        return new Completion(wrId, opcode, status, 0, 0, false, endpoint, detail);
    }

    public boolean isSuccess() {
        return status == Status.SUCCESS;
    }

    /** A flush because the peer closed the connection in order ({@link #PEER_CLOSED}), not a fault of either side. */
    public boolean peerClosed() {
        return status == Status.WR_FLUSH_ERROR && detail != null && detail.contains(PEER_CLOSED);
    }

    @Override
    public String toString() {
        return "Completion[wrId=" + wrId + ", " + opcode + ", " + status + (detail == null ? "" : " (" + detail + ")")
                + ", bytes=" + byteLength + (hasImm ? ", imm=0x" + Integer.toHexString(immData) : "") + "]";
    }
}
