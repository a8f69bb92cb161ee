package io.erda.server.rdmp;

import io.erda.protocol.ConnectData;
import io.erda.protocol.MessageHeader;
import io.erda.protocol.PutRequest;
import io.erda.protocol.memory.ObjectLayout;
import io.erda.server.request.Request;

/** The three protocols of RDMP-KV, with their connect numbers and the limits their HELLO states. */
enum RdmpProtocol {
    /** RDMA-HERD: the value travels in the request; the server stages it into PM and replies. */
    HERD(ConnectData.PROTOCOL_HERD, "herd"),
    /** RDMP-SA: metadata reply, the client WRITEs, the server flushes and sets the flags (HERD's way below a size). */
    SA(ConnectData.PROTOCOL_RDMP_SA, "rdmp-sa"),
    /** RDMP-CC: metadata reply, the client WRITEs, flushes one-sided and sets the flags. */
    CC(ConnectData.PROTOCOL_RDMP_CC, "rdmp-cc");

    /** Receive buffers of the protocols whose requests carry values: a 256 KiB value with the longest key. */
    static final int VALUE_MESSAGE_LENGTH = (MessageHeader.LENGTH + PutRequest.KEY_OFFSET + ObjectLayout.MAX_KEY_LENGTH
            + (256 << 10) + 63) & -64;

    private final int code;
    private final String option;

    RdmpProtocol(int code, String option) {
        this.code = code;
        this.option = option;
    }

    int code() {
        return code;
    }

    String option() {
        return option;
    }

    /**
     * Bytes of each reply slot of a connection: HERD's GET replies carry the value, from reply buffers registered with
     * the connection as its receive buffers are (HERD's own responses come from registered memory, not a registration
     * per reply); the others reply with metadata only.
     */
    int replySize() {
        return this == HERD ? VALUE_MESSAGE_LENGTH : Request.MAX_MESSAGE_LENGTH;
    }

    /** Whether its requests carry values (HERD_PUT of any size): HERD, and SA below its threshold. */
    boolean carriesValues() {
        return this != CC;
    }

    int maxMessageLength() {
        return carriesValues() ? VALUE_MESSAGE_LENGTH : Request.MAX_MESSAGE_LENGTH;
    }

    /** Largest value with a 1-byte key: HERD's message, else the pool's largest slot. */
    int maxValueLength() {
        int inMessage = VALUE_MESSAGE_LENGTH - MessageHeader.LENGTH - PutRequest.KEY_OFFSET - 1;
        return this == HERD ? Math.min(inMessage, RdmpPool.MAX_VALUE_LENGTH) : RdmpPool.MAX_VALUE_LENGTH;
    }
}
