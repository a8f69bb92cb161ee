package io.erda.server.baseline;

import io.erda.protocol.BodyEncoder;
import io.erda.protocol.ConnectData;
import io.erda.protocol.MessageType;
import io.erda.protocol.WireStatus;
import io.erda.server.request.ServerConnection;
import io.erda.server.request.ErdaProtocolHandler;
import io.erda.server.request.Request;
import io.erda.server.store.Store;

/** The Redo Logging baseline (paper §5.1) on one connection, whose receive buffers are a lane of the {@link RedoLog}. */
final class RedoLogProtocolHandler extends BaselineProtocolHandler {
    private final RedoLog log;
    private final RedoLog.Lane lane;
    private final ServerConnection connection;

    RedoLogProtocolHandler(ErdaProtocolHandler common, Store store, RedoLog log, RedoLog.Lane lane, ServerConnection connection) {
        super(common, store, log, ConnectData.PROTOCOL_REDO_LOG, "redo-log");
        this.log = log;
        this.lane = lane;
        this.connection = connection;
    }

    @Override
    boolean write(Request request, Replies replies) {
        if (request.type() != MessageType.REDO_PUT) {
            return false;
        }
        log.accept(connection, lane, request);
        replies.reply(MessageType.REDO_PUT_REPLY, WireStatus.OK, 0, BodyEncoder.EMPTY);
        return true;
    }

    @Override
    int maxValueLength() {
        return RedoLog.MAX_VALUE_LENGTH;
    }

    @Override
    int maxMessageLength() {
        return RedoLog.BUFFER_SIZE;
    }
}
