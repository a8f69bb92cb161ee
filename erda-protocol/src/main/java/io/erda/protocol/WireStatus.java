package io.erda.protocol;

/** Status of a reply. Anything but {@link #OK} comes with an {@link MessageType#ERROR} body naming the values involved. */
public enum WireStatus {
    OK(0),
    /** Malformed request: bad magic, version, type, or lengths that do not add up. */
    BAD_REQUEST(1),
    /** Key longer than the limit. */
    KEY_TOO_LONG(2),
    /** Object larger than a segment can hold. */
    VALUE_TOO_LARGE(3),
    /** The hash table has no room for a new key. */
    TABLE_FULL(4),
    /** The head's chain cannot grow (no more regions / offsets). */
    LOG_FULL(5),
    /** A head id or chain offset the server does not have. */
    UNKNOWN_ADDRESS(6),
    /** GET of a key that does not exist. */
    NOT_FOUND(7),
    /** The request is valid but this server does not serve it (wrong protocol for the connection). */
    UNSUPPORTED(8),
    INTERNAL(9),
    /**
     * A clustered server is not the primary of the key's shard (or, for a replica reservation, not its backup): the
     * client's shard map is stale; it waits for the new one and tries again (docs/ARCHITECTURE.md, [cluster]).
     */
    NOT_PRIMARY(10),
    /** The primary could not reserve on the shard's backup; nothing was written, the client tries again. */
    BACKUP_UNAVAILABLE(11),
    /**
     * A replica reservation whose sender's tag is wrong: it was not forwarded by a member holding the cluster's secret
     * ({@link ReplicaSender}); not retried.
     */
    NOT_AUTHORIZED(12),
    /**
     * A PUT or DELETE of a key that exists, to a server whose updates are published by the client's CAS
     * ({@link PutMode#ONE_SIDED}): the client locates the entry, writes into a block ({@link MessageType#BLOCK}) and
     * CASes the word.
     */
    PUBLISH_BY_CAS(13);

    private static final WireStatus[] BY_CODE = values();

    private final int code;

    WireStatus(int code) {
        this.code = code;
    }

    public int code() {
        return code;
    }

    public static WireStatus of(int code) {
        return code >= 0 && code < BY_CODE.length ? BY_CODE[code] : null;
    }
}
