package io.erda.protocol;

/**
 * The two-sided messages between clients and the server. Requests have odd codes, their replies the next even
 * code; {@link #ERROR} answers any request.
 */
public enum MessageType {
    /** Client introduces itself after connecting; the reply describes the store (geometry, table, head array). */
    HELLO(1),
    HELLO_REPLY(2),
    /** Reserve space for a PUT or DELETE (paper §3.3); the reply carries the object's address and lease. */
    PUT(3),
    PUT_REPLY(4),
    /** Server-side GET: the fallback when one-sided reads keep failing, and the baselines' GET. */
    GET(5),
    GET_REPLY(6),
    /** Persistence method server-flush: flush a range the client wrote, then reply. */
    FLUSH(7),
    FLUSH_REPLY(8),
    /** Head-array refresh (a client met a region it does not know). */
    HEADS(9),
    HEADS_REPLY(10),
    /**
     * A client's report that a key's newest object looked torn: only a hint (docs/ARCHITECTURE.md, [leases]). Body: a
     * {@link KeyRequest}; reply body: {@link RepairHintReply}.
     */
    REPAIR_HINT(11),
    REPAIR_HINT_REPLY(12),
    STATS(13),
    STATS_REPLY(14),
    /**
     * Admin: clean one head now (paper §4.4) and reply when the run is done. Body: {@link CleanRequest}; reply body:
     * the run's report as UTF-8 "name=value" lines.
     */
    CLEAN(15),
    CLEAN_REPLY(16),
    /** Redo Logging baseline: key and value in the message, into the PM redo log. */
    REDO_PUT(21),
    REDO_PUT_REPLY(22),
    /** Read After Write baseline: reserve a ring slot. */
    RAW_RESERVE(23),
    RAW_RESERVE_REPLY(24),
    /**
     * RDMA-HERD and RDMP-SA below its threshold (RDMP-KV): a {@link PutRequest} followed by the value ({@link HerdPut});
     * the server stages it into PM and replies once it is persistent. A DELETE of all three RDMP-KV protocols.
     */
    HERD_PUT(33),
    HERD_PUT_REPLY(34),
    /**
     * RDMP-SA and RDMP-CC (RDMP-KV): the server-reply metadata phase of a PUT, a {@link PutRequest}; the reply, a
     * {@link RawReserveReply}, names the object the client WRITEs the value into (position: its sequence number).
     */
    RDMP_ALLOC(35),
    RDMP_ALLOC_REPLY(36),
    /** RDMP-SA: the server flushes the value the client wrote and sets the two flags ({@link RdmpCommitRequest}). */
    RDMP_COMMIT(37),
    RDMP_COMMIT_REPLY(38),
    /** RDMP-SA and RDMP-CC GET: a {@link KeyRequest}; the reply, a {@link RawReserveReply}, locates the newest object. */
    RDMP_LOOKUP(39),
    RDMP_LOOKUP_REPLY(40),
    /**
     * {@link PutMode#ONE_SIDED}: a leased log block for one-sided updates ({@link BlockRequest}: the head, and the
     * least length the client needs); the reply is a {@link PutReply} naming the block (its length as the object
     * length) and its lease. Refused with {@link WireStatus#UNSUPPORTED} by a server in {@link PutMode#RESERVE}.
     */
    BLOCK(41),
    BLOCK_REPLY(42),
    /**
     * {@link PutMode#ONE_SIDED}: a client gives a block back before its lease ends (it saw its head's state change,
     * so it will publish nothing more from it), so a cleaning of the head need not wait out the lease. Body: a
     * {@link FlushRequest} naming the block (head, chain offset, length); empty reply.
     */
    BLOCK_RETURN(43),
    BLOCK_RETURN_REPLY(44),
    /**
     * Server to client, unsolicited (request id 0): a head's state changed (cleaning started, ended, or its old chain
     * was retired); body: the whole {@link HeadArray}. Flow-controlled by {@link HeadStateCredits}.
     */
    HEAD_STATE(31),
    ERROR(127);

    private static final MessageType[] BY_CODE = new MessageType[128];

    static {
        for (MessageType t : values()) {
            BY_CODE[t.code] = t;
        }
    }

    private final int code;

    MessageType(int code) {
        this.code = code;
    }

    public int code() {
        return code;
    }

    /** The type for a wire code, or null if unknown. */
    public static MessageType of(int code) {
        return code >= 0 && code < BY_CODE.length ? BY_CODE[code] : null;
    }

    /** The reply type of a request type. */
    public MessageType reply() {
        MessageType r = of(code + 1);
        if ((code & 1) == 0 || r == null) {
            throw new IllegalStateException(this + " is not a request");
        }
        return r;
    }
}
