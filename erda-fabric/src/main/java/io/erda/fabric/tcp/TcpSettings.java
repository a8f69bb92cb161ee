package io.erda.fabric.tcp;

import io.erda.fabric.FabricException;
import java.time.Duration;
import java.util.Map;

/**
 * What {@code Fabric.open(tcp://..., properties)} understands; every value is a positive count of milliseconds.
 *
 * @param connectTimeout {@value #CONNECT_TIMEOUT}: how long {@code connect} may take in all, the TCP connection of both
 *                       sockets and the peer's ACCEPT or REJECT; default {@link #DEFAULT_CONNECT_TIMEOUT}
 * @param peerTimeout    {@value #PEER_TIMEOUT}: how long an established connection may receive nothing, neither data
 *                       nor a heartbeat, before the endpoint fails (see {@link TcpEndpoint}, "Dead peers"); default
 *                       {@link #DEFAULT_PEER_TIMEOUT}
 */
record TcpSettings(Duration connectTimeout, Duration peerTimeout) {
    static final String CONNECT_TIMEOUT = "connectTimeoutMillis";
    static final String PEER_TIMEOUT = "peerTimeoutMillis";
    static final Duration DEFAULT_CONNECT_TIMEOUT = Duration.ofSeconds(10);
    static final Duration DEFAULT_PEER_TIMEOUT = Duration.ofSeconds(5);
    /** Heartbeats a side sends per (agreed) peer timeout: a few may be late or lost before the peer gives up. */
    static final int HEARTBEATS_PER_TIMEOUT = 5;

    static TcpSettings parse(Map<String, String> properties) {
        return new TcpSettings(millis(properties, CONNECT_TIMEOUT, DEFAULT_CONNECT_TIMEOUT),
                millis(properties, PEER_TIMEOUT, DEFAULT_PEER_TIMEOUT));
    }

    private static Duration millis(Map<String, String> properties, String key, Duration fallback) {
        String value = properties.get(key);
        if (value == null) {
            return fallback;
        }
        long ms;
        try {
            ms = Long.parseLong(value.strip());
        } catch (NumberFormatException e) {
            ms = -1;
        }
        if (ms <= 0) {
            throw new FabricException("tcp fabric property " + key + "=" + value + " is not a positive number of milliseconds");
        }
        return Duration.ofMillis(ms);
    }
}
