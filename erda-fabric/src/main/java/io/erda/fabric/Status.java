package io.erda.fabric;

/** Completion status, modelled on {@code ibv_wc_status}. */
public enum Status {
    SUCCESS,
    /** The local buffer is too short (a RECV smaller than the message, a gather beyond the region). */
    LOCAL_LENGTH_ERROR,
    /** The local buffer is not registered with this endpoint's fabric or lacks LOCAL_WRITE. */
    LOCAL_PROTECTION_ERROR,
    /** The work request itself is malformed (unaligned atomic, negative length, ...). */
    LOCAL_QP_OPERATION_ERROR,
    /** The endpoint had gone to the error state (earlier error or broken connection); the request was not executed. */
    WR_FLUSH_ERROR,
    /** The target could not execute the request (for example a message longer than its posted receive). */
    REMOTE_INVALID_REQUEST,
    /** Unknown rkey, address range outside the registered region, or a missing access flag. Memory untouched. */
    REMOTE_ACCESS_ERROR,
    /** The target failed while executing the request. */
    REMOTE_OPERATION_ERROR,
    /** The peer did not answer (connection lost while the request was in flight). */
    RETRY_EXCEEDED,
    /** A SEND or WRITE_WITH_IMM found no posted receive at the target within the RNR retry window. */
    RNR_RETRY_EXCEEDED,
    GENERAL_ERROR;

    public boolean isSuccess() {
        return this == SUCCESS;
    }
}
