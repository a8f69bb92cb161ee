package io.erda.client;

import io.erda.protocol.WireStatus;

/** The server refused a request, or answered in a way the protocol does not allow; carries the server's status. */
public class ErdaException extends RuntimeException {
    private final WireStatus status;

    public ErdaException(WireStatus status, String message) {
        super(status + ": " + message);
        this.status = status;
    }

    public ErdaException(WireStatus status, String message, Throwable cause) {
        super(status + ": " + message, cause);
        this.status = status;
    }

    /** The server's status; {@link WireStatus#INTERNAL} for a protocol violation seen by the client. */
    public WireStatus status() {
        return status;
    }
}
