package io.erda.client;

import io.erda.fabric.Completion;
import io.erda.fabric.CompletionException;
import io.erda.fabric.Endpoint;
import io.erda.fabric.EndpointOptions;
import io.erda.fabric.Fabric;
import io.erda.fabric.RecvRequest;
import io.erda.fabric.SyncEndpoint;
import io.erda.protocol.BodyEncoder;
import io.erda.protocol.ConnectData;
import io.erda.protocol.ErrorReply;
import io.erda.protocol.GetReply;
import io.erda.protocol.HeadArray;
import io.erda.protocol.HeadStateCredits;
import io.erda.protocol.KeyRequest;
import io.erda.protocol.MessageHeader;
import io.erda.protocol.MessageType;
import io.erda.protocol.StoreInfo;
import io.erda.protocol.WireFormatException;
import io.erda.protocol.WireStatus;
import io.erda.protocol.memory.Key;
import java.lang.foreign.MemorySegment;

/**
 * One connection to the server: an endpoint with its own completion queues, registered buffers, and the store
 * view its HELLO returned. Used by one thread at a time (the pool hands it out), so every operation is
 * synchronous: post, wait for the completion.
 */
final class ClientConnection implements AutoCloseable {
    /** Requests: the largest is a PUT with a 64 KiB key. */
    private static final int SEND_BUFFER = 128 << 10;
    /**
     * Erda: receives for the unsolicited HEAD_STATEs the server may have outstanding, plus one for the reply. The
     * baselines are sent no HEAD_STATE (they never read the head array), so one receive, for the reply, is enough.
     */
    private static final int ERDA_RECEIVE_SLOTS = HeadStateCredits.CREDITS + 1;
    private static final int BASELINE_RECEIVE_SLOTS = 1;

    /** Reads a reply body (valid only inside the call: the receive is reposted afterwards). */
    @FunctionalInterface
    interface ReplyReader<T> {
        T read(Reply reply);
    }

    /** A received reply: its type, status and body (a slice of the receive buffer). */
    record Reply(MessageType type, WireStatus status, MemorySegment body) {
        /** Throws the server's refusal as an {@link ErdaException} unless this is an OK reply of {@code expected}. */
        Reply expect(MessageType expected) {
            if (status != WireStatus.OK || type == MessageType.ERROR) {
                WireStatus s = status == WireStatus.OK ? WireStatus.INTERNAL : status;
                throw new ErdaException(s, ErrorReply.decode(body, 0, (int) body.byteSize()));
            }
            if (type != expected) {
                throw new ErdaException(WireStatus.INTERNAL, "server answered " + type + " where " + expected + " was due");
            }
            return this;
        }
    }

    private final Endpoint endpoint;
    private final SyncEndpoint sync;
    private final LocalBuffer send;
    private final LocalBuffer receive;
    private final int slotSize;
    /** Each receive slot's posting, made once (reposted after every reply). */
    private final RecvRequest[] receiveRequests;
    /** READ destination of objects and of the baselines' reads. */
    final LocalBuffer reads;
    /** READ destination of hash-table entries: windows and stripe version words ({@link RemoteTable}). */
    final LocalBuffer entries;
    /** Objects being written. */
    final LocalBuffer writes;
    /** One-sided mode: this connection's leased blocks and located entries ({@link OneSidedPut}). */
    final OneSidedPut.State oneSided = new OneSidedPut.State();
    private final StoreView view;
    private final ClientOptions.Protocol protocol;
    private final ClientStats stats;
    private int nextRequestId;
    /** HEAD_STATE messages processed, and the count the last request acknowledged (HeadStateCredits). */
    private int headStatesProcessed;
    private int headStatesAcknowledged;

    private ClientConnection(Fabric fabric, ClientOptions options, ClientStats stats, Endpoint endpoint) {
        this.endpoint = endpoint;
        this.protocol = options.protocol();
        this.stats = stats;
        this.slotSize = options.replyBufferBytes();
        int receiveSlots = protocol == ClientOptions.Protocol.ERDA ? ERDA_RECEIVE_SLOTS : BASELINE_RECEIVE_SLOTS;
        LocalBuffer s = null;
        LocalBuffer r = null;
        LocalBuffer rd = null;
        LocalBuffer en = null;
        LocalBuffer w = null;
        SyncEndpoint se = null;
        RecvRequest[] posts = new RecvRequest[receiveSlots];
        try {
            s = new LocalBuffer(fabric, SEND_BUFFER);
            r = new LocalBuffer(fabric, (long) slotSize * receiveSlots);
            rd = new LocalBuffer(fabric, 4096);
            en = new LocalBuffer(fabric, 4096);
            w = new LocalBuffer(fabric, 4096);
            for (int slot = 0; slot < receiveSlots; slot++) {
                posts[slot] = new RecvRequest(slot, r.region(), (long) slot * slotSize, slotSize);
                endpoint.postRecv(posts[slot]);
            }
            endpoint.connect(options.uri(), new ConnectData(options.protocol().code()).encode());
            se = new SyncEndpoint(endpoint, options.operationTimeout());
        } catch (RuntimeException failure) {
            closeAll(failure, endpoint, se, w, en, rd, r, s);
            throw failure;
        }
        this.send = s;
        this.receive = r;
        this.reads = rd;
        this.entries = en;
        this.writes = w;
        this.sync = se;
        this.receiveRequests = posts;
        try {
            this.view = new StoreView(call(MessageType.HELLO, (seg, off) -> 0,
                    reply -> StoreInfo.decode(reply.expect(MessageType.HELLO_REPLY).body(), 0, (int) reply.body().byteSize())));
            if (view.info().protocol() != options.protocol().code()) {
                throw new ErdaException(WireStatus.INTERNAL, "server described protocol " + view.info().protocol()
                        + " to a " + options.protocol() + " connection");
            }
        } catch (RuntimeException e) {
            close();
            throw e;
        }
    }

    /**
     * Creates an endpoint, applies the decorator, posts receives, connects and says HELLO. A baseline's SEND may
     * meet no posted receive while the server's applier catches up (the redo log recycles a receive buffer only
     * once its entry is applied): those endpoints wait for one as long as for any reply, like verbs' rnr_retry 7.
     * HEAD_STATEs processed are counted in {@code stats}.
     */
    static ClientConnection open(Fabric fabric, ClientOptions options, ClientStats stats) {
        EndpointOptions defaults = EndpointOptions.defaults().withConnectTimeout(options.operationTimeout());
        EndpointOptions endpointOptions = options.protocol() == ClientOptions.Protocol.ERDA ? defaults
                : defaults.withRnrTimeout(options.operationTimeout());
        Endpoint endpoint = options.endpointDecorator().apply(fabric.createEndpoint(endpointOptions));
        return new ClientConnection(fabric, options, stats, endpoint);
    }

    /** The protocol this connection speaks, as its option name ({@code REDO_LOG}). */
    String protocolName() {
        return protocol.name();
    }

    StoreView view() {
        return view;
    }

    SyncEndpoint sync() {
        return sync;
    }

    /**
     * Sends one request and returns what {@code reader} makes of the reply. An unsolicited HEAD_STATE that arrives
     * first updates the head array. A {@link WireFormatException} in a reply becomes an {@link ErdaException}.
     */
    <T> T call(MessageType type, BodyEncoder body, ReplyReader<T> reader) {
        int requestId = ++nextRequestId;
        MemorySegment s = send.segment();
        int bodyLength = body.encode(s, MessageHeader.LENGTH);
        headStatesAcknowledged = headStatesProcessed;
        MessageHeader.write(s, 0, type, requestId, WireStatus.OK, HeadStateCredits.flags(headStatesProcessed), bodyLength);
        // Unsignalled: the reply proves the server received the request (and that the buffer is free again), so
        // waiting for the SEND's own completion first only added a hand-off per request (tcp: the ack's reader thread)
        sync.sendUnsignaled(send.region(), 0, MessageHeader.LENGTH + bodyLength);
        while (true) {
            Completion c = receive();
            int slot = (int) c.wrId();
            long offset = (long) slot * slotSize;
            try {
                MemorySegment buffer = receive.segment();
                MessageType replyType = MessageHeader.check(buffer, offset, c.byteLength());
                MemorySegment replyBody = buffer.asSlice(offset + MessageHeader.LENGTH, MessageHeader.bodyLength(buffer, offset));
                if (replyType == MessageType.HEAD_STATE) {
                    headState(replyBody);
                    continue;
                }
                int id = MessageHeader.requestId(buffer, offset);
                if (id != requestId) {
                    throw new ErdaException(WireStatus.INTERNAL, "reply to request " + id + " while waiting for " + requestId);
                }
                return reader.read(new Reply(replyType, WireStatus.of(MessageHeader.status(buffer, offset)), replyBody));
            } catch (WireFormatException e) {
                throw new ErdaException(WireStatus.INTERNAL, "malformed reply to " + type + ": " + e.getMessage(), e);
            } finally {
                endpoint.postRecv(receiveRequests[slot]);
            }
        }
    }

    /** The next receive; if it was flushed because the request's SEND failed, the SEND's failure (its real cause). */
    private Completion receive() {
        try {
            return sync.receive();
        } catch (CompletionException flushed) {
            Completion failedSend = sync.failedSend();
            if (failedSend == null) {
                throw flushed;
            }
            CompletionException cause = new CompletionException(failedSend);
            cause.addSuppressed(flushed);
            throw cause;
        }
    }

    /**
     * The two-sided GET (GET request, GET_REPLY): Erda's fallback and the baselines' only GET. The value is
     * copied into {@link #reads} (the reply's receive buffer is reposted), valid until the next request.
     */
    MemorySegment getTwoSided(Key key) {
        return call(MessageType.GET, new KeyRequest(key.bytes())::encode, reply -> {
            if (reply.status() == WireStatus.NOT_FOUND) {
                return null;
            }
            GetReply r = GetReply.decode(reply.expect(MessageType.GET_REPLY).body(), 0, (int) reply.body().byteSize());
            reads.ensure(r.value().byteSize());
            MemorySegment value = reads.segment().asSlice(0, r.value().byteSize());
            MemorySegment.copy(r.value(), 0, value, 0, value.byteSize());
            return value;
        });
    }

    /**
     * Paper §4.4, at the start of every operation: processes the HEAD_STATE messages that arrived while the connection
     * was idle (a client has no thread to take them sooner), so a head being cleaned goes two-sided before this
     * operation reads it; then acknowledges them with a HEADS request, which returns credit to the server and the
     * newest head array. Costs nothing when no notification came.
     */
    void catchUp() {
        Completion c;
        while ((c = endpoint.recvQueue().poll()) != null) {
            if (!c.isSuccess()) {
                throw new CompletionException(c); // the connection is dead: the caller reconnects
            }
            int slot = (int) c.wrId();
            long offset = (long) slot * slotSize;
            try {
                MemorySegment buffer = receive.segment();
                MessageType type = MessageHeader.check(buffer, offset, c.byteLength());
                if (type != MessageType.HEAD_STATE) {
                    throw new ErdaException(WireStatus.INTERNAL, "unsolicited " + type + " with no request outstanding");
                }
                headState(buffer.asSlice(offset + MessageHeader.LENGTH, MessageHeader.bodyLength(buffer, offset)));
            } catch (WireFormatException e) {
                throw new ErdaException(WireStatus.INTERNAL, "malformed HEAD_STATE: " + e.getMessage(), e);
            } finally {
                endpoint.postRecv(receiveRequests[slot]);
            }
        }
        if (headStatesProcessed != headStatesAcknowledged) {
            refreshHeads();
        }
    }

    /**
     * HEADS: brings the cached head array up to the server's ({@link StoreView#updateHeads}). Sent to acknowledge
     * HEAD_STATEs ({@link #catchUp}) and when an object read meets a region the cached array does not know (chain
     * growth).
     */
    void refreshHeads() {
        HeadArray heads = call(MessageType.HEADS, BodyEncoder.EMPTY, reply -> HeadArray.decode(
                reply.expect(MessageType.HEADS_REPLY).body(), 0, (int) reply.body().byteSize()));
        view.updateHeads(heads);
    }

    private void headState(MemorySegment body) {
        HeadArray heads = HeadArray.decode(body, 0, (int) body.byteSize());
        headStatesProcessed++;
        stats.headStates.increment();
        if (view != null) { // during HELLO: its reply carries an array at least as new
            view.updateHeads(heads);
        }
    }

    /**
     * Makes the request buffer hold a message of {@code bytes} (RDMP-KV's HERD_PUT carries the value); only between
     * requests, as {@link LocalBuffer#ensure} requires.
     */
    void ensureRequestCapacity(long bytes) {
        send.ensure(bytes);
    }

    /** Largest request body the server's receive buffers take. */
    int maxRequestBody() {
        return Math.min(SEND_BUFFER, view.info().maxMessageLength()) - MessageHeader.LENGTH;
    }

    /** One-sided READ of {@code length} bytes at {@code remote} into {@link #reads} at {@code localOffset}. */
    void read(long localOffset, int length, long remote, int rkey) {
        sync.read(reads.region(), localOffset, length, remote, rkey);
    }

    /** One-sided READ of {@code length} bytes at {@code remote} into {@link #entries} at {@code localOffset}. */
    void readEntries(long localOffset, int length, long remote, int rkey) {
        sync.read(entries.region(), localOffset, length, remote, rkey);
    }

    boolean isBroken() {
        return endpoint.state() != Endpoint.State.CONNECTED;
    }

    @Override
    public void close() {
        closeAll(null, endpoint, sync, writes, entries, reads, receive, send);
    }

    private static void closeAll(RuntimeException primary, AutoCloseable... resources) {
        for (AutoCloseable r : resources) {
            if (r == null) {
                continue;
            }
            try {
                r.close();
            } catch (Exception e) {
                if (primary != null) {
                    primary.addSuppressed(e);
                }
            }
        }
    }
}
