package io.erda.server.request;

import io.erda.protocol.ErrorReply;
import io.erda.protocol.MessageHeader;
import io.erda.protocol.MessageType;
import io.erda.protocol.WireFormatException;
import io.erda.protocol.WireStatus;
import io.erda.server.store.RequestException;
import io.erda.server.store.StoreStats;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteOrder;
import java.util.function.BooleanSupplier;
import java.util.logging.Level;
import java.util.logging.Logger;

/**
 * Turns one received message into exactly one reply (docs/ARCHITECTURE.md, [bad-input]): the header is checked; a
 * message without a usable header (too short, wrong magic or version: no request id to answer) aborts its connection;
 * any other refusal becomes an ERROR reply with a status and a message naming value and limit. The receive buffer is
 * posted again afterwards.
 */
final class RequestDispatcher {
    private static final Logger LOG = Logger.getLogger(RequestDispatcher.class.getName());
    private static final ValueLayout.OfShort SHORT = ValueLayout.JAVA_SHORT_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);

    /** Processes send completions until the condition holds (a reply slot became free) or the connection died. */
    interface SendDrain {
        void until(ServerConnection connection, BooleanSupplier done);
    }

    private final StoreStats stats;
    private final SendDrain drain;

    RequestDispatcher(StoreStats stats, SendDrain drain) {
        this.stats = stats;
        this.drain = drain;
    }

    /**
     * Handles the message in {@code slot} of {@code received} bytes. Returns the request's type ({@code ERROR} for a
     * malformed one answered with an error), or null if the connection must be aborted. The reply is charged to
     * {@code cpu} just before it is posted (null: the request is not measured).
     */
    MessageType dispatch(ServerConnection connection, int slot, int received, RequestCpu cpu) {
        MemorySegment message = connection.received(slot);
        MessageType type;
        try {
            type = MessageHeader.check(message, 0, received);
        } catch (WireFormatException malformed) {
            stats.errors.increment();
            if (!hasRequestId(message, received)) {
                LOG.warning(() -> connection + ": aborted: " + malformed.getMessage());
                return null;
            }
            reply(connection, slot, MessageHeader.requestId(message, 0), MessageType.ERROR, cpu,
                    WireStatus.BAD_REQUEST, malformed.getMessage());
            connection.repost(slot);
            return MessageType.ERROR;
        }
        stats.received(type);
        int requestId = MessageHeader.requestId(message, 0);
        connection.headStatesProcessed(MessageHeader.flags(message, 0)); // before the reply: the client reads it first
        Request request = new Request(slot, type, requestId, message, MessageHeader.bodyLength(message, 0));
        try {
            connection.handler().handle(request, (replyType, status, maxBody, body) -> {
                awaitReplyRoom(connection, slot, maxBody);
                if (cpu != null) {
                    cpu.beforeReply(type);
                }
                connection.reply(slot, requestId, replyType, status, maxBody, body);
            });
        } catch (RequestException refused) {
            stats.errors.increment();
            reply(connection, slot, requestId, type, cpu, refused.status(), refused.getMessage());
        } catch (WireFormatException malformed) {
            stats.errors.increment();
            reply(connection, slot, requestId, type, cpu, WireStatus.BAD_REQUEST, malformed.getMessage());
        } catch (RuntimeException bug) {
            stats.errors.increment();
            LOG.log(Level.WARNING, connection + ": " + type + " failed", bug);
            reply(connection, slot, requestId, type, cpu, WireStatus.INTERNAL, type + " failed: " + bug);
        }
        connection.repost(slot);
        return type;
    }

    /** An ERROR reply to a request of type {@code request}. */
    private void reply(ServerConnection connection, int slot, int requestId, MessageType request, RequestCpu cpu,
                       WireStatus status, String text) {
        awaitReplyRoom(connection, slot, ErrorReply.MAX_LENGTH);
        if (cpu != null) {
            cpu.beforeReply(request);
        }
        connection.reply(slot, requestId, MessageType.ERROR, status, ErrorReply.MAX_LENGTH,
                (s, o) -> ErrorReply.encode(s, o, text));
    }

    private void awaitReplyRoom(ServerConnection connection, int slot, int maxBody) {
        if (!connection.canReply(slot, maxBody)) {
            drain.until(connection, () -> connection.canReply(slot, maxBody));
        }
    }

    /** A header with the right magic and version carries a request id worth answering even if the rest is bad. */
    private static boolean hasRequestId(MemorySegment message, int received) {
        return received >= MessageHeader.LENGTH && message.get(SHORT, MessageHeader.MAGIC_OFFSET) == MessageHeader.MAGIC
                && message.get(ValueLayout.JAVA_BYTE, MessageHeader.VERSION_OFFSET) == MessageHeader.VERSION;
    }
}
