package io.erda.fabric.verbs;

import io.erda.fabric.Access;
import io.erda.fabric.Opcode;
import io.erda.fabric.Status;
import io.erda.ffm.verbs.Verbs;
import java.util.Set;

/** The translations between the fabric SPI and verbs enums: ibv_wc_status, ibv_wc_opcode, ibv_access_flags. */
final class WcStatus {
    private WcStatus() {}

    private static final String[] NAMES = {"IBV_WC_SUCCESS", "IBV_WC_LOC_LEN_ERR", "IBV_WC_LOC_QP_OP_ERR",
            "IBV_WC_LOC_EEC_OP_ERR", "IBV_WC_LOC_PROT_ERR", "IBV_WC_WR_FLUSH_ERR", "IBV_WC_MW_BIND_ERR",
            "IBV_WC_BAD_RESP_ERR", "IBV_WC_LOC_ACCESS_ERR", "IBV_WC_REM_INV_REQ_ERR", "IBV_WC_REM_ACCESS_ERR",
            "IBV_WC_REM_OP_ERR", "IBV_WC_RETRY_EXC_ERR", "IBV_WC_RNR_RETRY_EXC_ERR", "IBV_WC_LOC_RDD_VIOL_ERR",
            "IBV_WC_REM_INV_RD_REQ_ERR", "IBV_WC_REM_ABORT_ERR", "IBV_WC_INV_EECN_ERR", "IBV_WC_INV_EEC_STATE_ERR",
            "IBV_WC_FATAL_ERR", "IBV_WC_RESP_TIMEOUT_ERR", "IBV_WC_GENERAL_ERR"};

    static String name(int wcStatus) {
        return wcStatus >= 0 && wcStatus < NAMES.length ? NAMES[wcStatus] : "ibv_wc_status " + wcStatus;
    }

    /** ibv_wc_status → Status. */
    static Status status(int wcStatus) {
        return switch (wcStatus) {
            case Verbs.IBV_WC_SUCCESS -> Status.SUCCESS;
            case Verbs.IBV_WC_LOC_LEN_ERR -> Status.LOCAL_LENGTH_ERROR;
            case Verbs.IBV_WC_LOC_QP_OP_ERR, Verbs.IBV_WC_LOC_EEC_OP_ERR -> Status.LOCAL_QP_OPERATION_ERROR;
            case Verbs.IBV_WC_LOC_PROT_ERR, Verbs.IBV_WC_LOC_ACCESS_ERR -> Status.LOCAL_PROTECTION_ERROR;
            case Verbs.IBV_WC_WR_FLUSH_ERR -> Status.WR_FLUSH_ERROR;
            case Verbs.IBV_WC_REM_INV_REQ_ERR, Verbs.IBV_WC_REM_INV_RD_REQ_ERR -> Status.REMOTE_INVALID_REQUEST;
            case Verbs.IBV_WC_REM_ACCESS_ERR -> Status.REMOTE_ACCESS_ERROR;
            case Verbs.IBV_WC_REM_OP_ERR, Verbs.IBV_WC_REM_ABORT_ERR -> Status.REMOTE_OPERATION_ERROR;
            case Verbs.IBV_WC_RETRY_EXC_ERR, Verbs.IBV_WC_RESP_TIMEOUT_ERR -> Status.RETRY_EXCEEDED;
            case Verbs.IBV_WC_RNR_RETRY_EXC_ERR -> Status.RNR_RETRY_EXCEEDED;
            default -> Status.GENERAL_ERROR;
        };
    }

    /** The opcode of a successful receive completion: IBV_WC_RECV_RDMA_WITH_IMM → RECV_WITH_IMM. */
    static Opcode receiveOpcode(int wcOpcode) {
        return wcOpcode == Verbs.IBV_WC_RECV_RDMA_WITH_IMM ? Opcode.RECV_WITH_IMM : Opcode.RECV;
    }

    /**
     * Access → IBV_ACCESS_*. Verbs refuses REMOTE_WRITE or REMOTE_ATOMIC without LOCAL_WRITE (EINVAL), so those
     * rights imply LOCAL_WRITE here; local read is always implied, as in verbs.
     */
    static int accessFlags(Set<Access> access) {
        int flags = 0;
        for (Access a : access) {
            flags |= switch (a) {
                case LOCAL_WRITE -> Verbs.IBV_ACCESS_LOCAL_WRITE;
                case REMOTE_READ -> Verbs.IBV_ACCESS_REMOTE_READ;
                case REMOTE_WRITE -> Verbs.IBV_ACCESS_REMOTE_WRITE | Verbs.IBV_ACCESS_LOCAL_WRITE;
                case REMOTE_ATOMIC -> Verbs.IBV_ACCESS_REMOTE_ATOMIC | Verbs.IBV_ACCESS_LOCAL_WRITE;
            };
        }
        return flags;
    }
}
