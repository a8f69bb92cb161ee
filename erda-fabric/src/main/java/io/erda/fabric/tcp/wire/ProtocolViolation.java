package io.erda.fabric.tcp.wire;

import java.io.IOException;

/** The peer sent something the wire protocol does not allow; the connection that carried it is closed. */
public final class ProtocolViolation extends IOException {
    public ProtocolViolation(String message) {
        super(message);
    }
}
