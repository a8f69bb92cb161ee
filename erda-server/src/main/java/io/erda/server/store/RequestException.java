package io.erda.server.store;

import io.erda.protocol.WireStatus;

/** A request the server refuses: becomes an ERROR reply with this status and message (naming value and limit). */
public final class RequestException extends RuntimeException {
    private static final long serialVersionUID = 1L;
    private final transient WireStatus status;

    public RequestException(WireStatus status, String message) {
        super(message);
        this.status = status;
    }

    public WireStatus status() {
        return status;
    }
}
