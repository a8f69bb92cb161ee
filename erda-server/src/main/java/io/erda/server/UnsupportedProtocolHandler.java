package io.erda.server;

import io.erda.core.wire.WireStatus;

/** A protocol this server does not serve yet (the baselines): every request gets UNSUPPORTED, naming it. */
final class UnsupportedProtocolHandler implements ProtocolHandler {
    private final String protocol;

    UnsupportedProtocolHandler(String protocol) {
        this.protocol = protocol;
    }

    @Override
    public void handle(Request request, Replies replies) {
        throw new RequestException(WireStatus.UNSUPPORTED, request.type() + " on a " + protocol
                + " connection: this server does not serve the " + protocol + " protocol yet");
    }
}
