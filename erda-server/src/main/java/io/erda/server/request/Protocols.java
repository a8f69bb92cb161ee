package io.erda.server.request;

import java.util.HashMap;
import java.util.Map;

/** The protocols a server speaks, by the protocol number a client's connect private data names. */
public final class Protocols {
    private final Map<Integer, Protocol> byNumber = new HashMap<>();

    /** Registers {@code protocol} as number {@code number} ({@code ConnectData.PROTOCOL_...}); returns this. */
    public Protocols add(int number, Protocol protocol) {
        if (byNumber.putIfAbsent(number, protocol) != null) {
            throw new IllegalArgumentException("protocol " + number + " is registered already");
        }
        return this;
    }

    /** Protocol {@code number}; an unknown one throws naming it. */
    Protocol get(int number) {
        Protocol protocol = byNumber.get(number);
        if (protocol == null) {
            throw new IllegalArgumentException("protocol " + number + " is unknown");
        }
        return protocol;
    }
}
