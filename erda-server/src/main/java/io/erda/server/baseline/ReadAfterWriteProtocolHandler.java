package io.erda.server.baseline;

import io.erda.protocol.ConnectData;
import io.erda.protocol.MessageType;
import io.erda.protocol.PutRequest;
import io.erda.protocol.RawReserveReply;
import io.erda.protocol.WireStatus;
import io.erda.protocol.memory.ObjectLayout;
import io.erda.server.request.ErdaProtocolHandler;
import io.erda.server.request.Request;
import io.erda.server.store.Store;
import java.lang.foreign.MemorySegment;

/**
 * The Read After Write baseline (paper §5.1) on one connection: RAW_RESERVE (a {@link PutRequest} body) hands out a
 * slot of the {@link ReadAfterWriteRing}; the client's WRITE and forcing READ need no server thread.
 */
final class ReadAfterWriteProtocolHandler extends BaselineProtocolHandler {
    private final ReadAfterWriteRing ring;
    private final int maxMessageLength;

    ReadAfterWriteProtocolHandler(ErdaProtocolHandler common, Store store, ReadAfterWriteRing ring, int maxMessageLength) {
        super(common, store, ring, ConnectData.PROTOCOL_READ_AFTER_WRITE, "read-after-write");
        this.ring = ring;
        this.maxMessageLength = maxMessageLength;
    }

    @Override
    boolean write(Request request, Replies replies) {
        if (request.type() != MessageType.RAW_RESERVE) {
            return false;
        }
        MemorySegment s = request.message();
        long body = Request.BODY_OFFSET;
        ErdaProtocolHandler.requireKeyLength(s, body + PutRequest.KEY_LENGTH_OFFSET, request.bodyLength(),
                PutRequest.KEY_OFFSET);
        PutRequest put = PutRequest.decode(s, body, request.bodyLength(), ObjectLayout.MAX_KEY_LENGTH, Integer.MAX_VALUE);
        RawReserveReply reply = ring.reserve(put.key(), put.valueLength(), put.delete());
        replies.reply(MessageType.RAW_RESERVE_REPLY, WireStatus.OK, RawReserveReply.LENGTH, reply::encode);
        return true;
    }

    @Override
    int maxValueLength() {
        return ReadAfterWriteRing.MAX_VALUE_LENGTH;
    }

    @Override
    int maxMessageLength() {
        return maxMessageLength;
    }
}
