package io.erda.server.request;

import io.erda.protocol.MessageHeader;
import io.erda.protocol.MessageType;
import io.erda.protocol.PutRequest;
import io.erda.protocol.memory.ObjectLayout;
import java.lang.foreign.MemorySegment;

/**
 * One received request whose header has been checked.
 *
 * @param slot       the receive slot it arrived in (its reply goes out of the same reply slot)
 * @param type       the request type
 * @param requestId  echoed in the reply
 * @param message    the receive buffer (header at 0, body at {@link #BODY_OFFSET})
 * @param bodyLength bytes of body, within what was received
 */
public record Request(int slot, MessageType type, int requestId, MemorySegment message, int bodyLength) {
    public static final long BODY_OFFSET = MessageHeader.LENGTH;
    /** Largest request a DRAM receive buffer takes: a header and a PUT of the longest key, rounded up to a cache line. */
    public static final int MAX_MESSAGE_LENGTH = (MessageHeader.LENGTH + PutRequest.KEY_OFFSET
            + ObjectLayout.MAX_KEY_LENGTH + 63) & -64;
}
