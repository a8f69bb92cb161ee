package io.erda.server.rdmp;

import io.erda.protocol.BodyEncoder;
import io.erda.protocol.HerdPut;
import io.erda.protocol.MessageType;
import io.erda.protocol.PutRequest;
import io.erda.protocol.RawReserveReply;
import io.erda.protocol.RdmpCommitRequest;
import io.erda.protocol.StoreInfo;
import io.erda.protocol.WireStatus;
import io.erda.protocol.memory.ObjectLayout;
import io.erda.server.request.ErdaProtocolHandler;
import io.erda.server.request.ProtocolHandler;
import io.erda.server.request.Request;
import io.erda.server.store.RequestException;
import java.lang.foreign.MemorySegment;

/**
 * One connection of an RDMP-KV protocol ({@link RdmpProtocol}) over the {@link RdmpPool}. Every one takes HERD_PUT
 * (RDMA-HERD's PUT; RDMP-SA's below its threshold; the DELETE of all three) and the server-reply GET; RDMP-SA and
 * RDMP-CC take RDMP_ALLOC and RDMP_LOOKUP, RDMP-SA also RDMP_COMMIT. HELLO and STATS are answered as {@code common}
 * answers them, HELLO with this protocol's limits.
 */
final class RdmpProtocolHandler implements ProtocolHandler {
    private final ErdaProtocolHandler common;
    private final RdmpPool pool;
    private final RdmpProtocol protocol;

    RdmpProtocolHandler(ErdaProtocolHandler common, RdmpPool pool, RdmpProtocol protocol) {
        this.common = common;
        this.pool = pool;
        this.protocol = protocol;
    }

    /** Each worker thread's buffer for a GET's value, between the pool and the reply. */
    private static final ThreadLocal<MemorySegment> VALUE = ThreadLocal.withInitial(() ->
            MemorySegment.ofArray(new byte[RdmpPool.MAX_VALUE_LENGTH]));

    @Override
    public void handle(Request request, Replies replies) {
        long body = Request.BODY_OFFSET;
        switch (request.type()) {
            case HELLO -> {
                StoreInfo info = common.storeInfo().forProtocol(protocol.code(), protocol.maxValueLength(),
                        protocol.maxMessageLength());
                replies.reply(MessageType.HELLO_REPLY, WireStatus.OK, info.encodedLength(), info::encode);
            }
            case STATS -> common.handle(request, replies);
            case GET -> {
                MemorySegment value = VALUE.get();
                int length = pool.value(ErdaProtocolHandler.key(request), value);
                ErdaProtocolHandler.replyValue(replies, length < 0 ? null : value.asSlice(0, length));
            }
            case HERD_PUT -> {
                ErdaProtocolHandler.requireKeyLength(request.message(), body + PutRequest.KEY_LENGTH_OFFSET,
                        request.bodyLength(), PutRequest.KEY_OFFSET);
                HerdPut put = HerdPut.decode(request.message(), body, request.bodyLength(), ObjectLayout.MAX_KEY_LENGTH,
                        Integer.MAX_VALUE);
                if (put.put().delete()) {
                    pool.delete(put.put().key());
                } else {
                    pool.stage(put.put().key(), put.value());
                }
                replies.reply(MessageType.HERD_PUT_REPLY, WireStatus.OK, 0, BodyEncoder.EMPTY);
            }
            case RDMP_ALLOC -> {
                requireOneSided(request);
                ErdaProtocolHandler.requireKeyLength(request.message(), body + PutRequest.KEY_LENGTH_OFFSET,
                        request.bodyLength(), PutRequest.KEY_OFFSET);
                PutRequest put = PutRequest.decode(request.message(), body, request.bodyLength(),
                        ObjectLayout.MAX_KEY_LENGTH, Integer.MAX_VALUE);
                if (put.delete()) {
                    throw new RequestException(WireStatus.BAD_REQUEST, "RDMP_ALLOC of a DELETE: a DELETE is a HERD_PUT");
                }
                RawReserveReply reply = pool.allocate(put.key(), put.valueLength());
                replies.reply(MessageType.RDMP_ALLOC_REPLY, WireStatus.OK, RawReserveReply.LENGTH, reply::encode);
            }
            case RDMP_LOOKUP -> {
                requireOneSided(request);
                RawReserveReply reply = pool.lookup(ErdaProtocolHandler.key(request));
                if (reply == null) {
                    replies.reply(MessageType.RDMP_LOOKUP_REPLY, WireStatus.NOT_FOUND, 0, BodyEncoder.EMPTY);
                } else {
                    replies.reply(MessageType.RDMP_LOOKUP_REPLY, WireStatus.OK, RawReserveReply.LENGTH, reply::encode);
                }
            }
            case RDMP_COMMIT -> {
                if (protocol != RdmpProtocol.SA) {
                    throw refused(request);
                }
                RdmpCommitRequest commit = RdmpCommitRequest.decode(request.message(), body, request.bodyLength());
                pool.commit(commit.sequence(), commit.address());
                replies.reply(MessageType.RDMP_COMMIT_REPLY, WireStatus.OK, 0, BodyEncoder.EMPTY);
            }
            default -> throw refused(request);
        }
    }

    private void requireOneSided(Request request) {
        if (protocol == RdmpProtocol.HERD) {
            throw refused(request);
        }
    }

    private RequestException refused(Request request) {
        return new RequestException((request.type().code() & 1) == 0 ? WireStatus.BAD_REQUEST : WireStatus.UNSUPPORTED,
                "message type " + request.type() + " (" + request.type().code() + ") is not a request of the "
                        + protocol.option() + " protocol");
    }
}
