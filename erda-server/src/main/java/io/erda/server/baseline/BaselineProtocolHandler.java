package io.erda.server.baseline;

import io.erda.protocol.MessageType;
import io.erda.protocol.StoreInfo;
import io.erda.protocol.WireStatus;
import io.erda.server.request.ErdaProtocolHandler;
import io.erda.server.request.ProtocolHandler;
import io.erda.server.request.Request;
import io.erda.server.store.RequestException;
import io.erda.server.store.Store;
import java.lang.foreign.MemorySegment;

/**
 * What the two baselines (paper §5.1) share: HELLO (the store described with the protocol's own limits), the
 * two-sided GET (pending writes of the protocol's PM log first, then the table) and STATS; the write path is each
 * baseline's own.
 */
abstract class BaselineProtocolHandler implements ProtocolHandler {
    private final ErdaProtocolHandler common;
    private final Store store;
    /** This protocol's PM log: a key's not-yet-applied write, if any, answers its GET. */
    private final AppliedLog log;
    private final int protocol;
    private final String name;

    BaselineProtocolHandler(ErdaProtocolHandler common, Store store, AppliedLog log, int protocol, String name) {
        this.common = common;
        this.store = store;
        this.log = log;
        this.protocol = protocol;
        this.name = name;
    }

    /** Handles this protocol's write request; false if {@code request} is not one. */
    abstract boolean write(Request request, Replies replies);

    /** Largest value with a 1-byte key; largest request message. */
    abstract int maxValueLength();

    abstract int maxMessageLength();

    @Override
    public final void handle(Request request, Replies replies) {
        switch (request.type()) {
            case HELLO -> {
                StoreInfo info = common.storeInfo().forProtocol(protocol,
                        Math.min(maxValueLength(), store.maxValueLength()), maxMessageLength());
                replies.reply(MessageType.HELLO_REPLY, WireStatus.OK, info.encodedLength(), info::encode);
            }
            case GET -> {
                MemorySegment key = ErdaProtocolHandler.key(request);
                PendingWrite pending = log.lookup(key);
                ErdaProtocolHandler.replyValue(replies, pending.pending() ? pending.value() : store.get(key));
            }
            case STATS -> common.handle(request, replies);
            default -> {
                if (!write(request, replies)) {
                    throw new RequestException((request.type().code() & 1) == 0 ? WireStatus.BAD_REQUEST
                            : WireStatus.UNSUPPORTED, "message type " + request.type() + " (" + request.type().code()
                            + ") is not a request of the " + name + " protocol");
                }
            }
        }
    }
}
