package io.erda.bench.compare;

import io.erda.client.ClientOptions;
import io.erda.client.KeyValueClient;
import io.erda.client.PooledClient;
import java.net.URI;
import java.util.Arrays;

/**
 * Whether a protocol's server takes a sweep's value size: its HELLO states the largest value (with a 1-byte key); a
 * YCSB record adds its encoding (about 11 bytes, {@code RecordEncoding}) and a key of up to {@link #KEY_ROOM} bytes.
 */
final class ValueLimit {
    /** Room for YCSB's key ("user" and up to 19 digits) and the record's encoding around the value. */
    static final int KEY_ROOM = 48;

    private ValueLimit() {
    }

    /**
     * Null if the protocol's server at {@code uri} takes {@code valueSize}-byte YCSB values (or it is not an erda-client
     * protocol: a peer system); else why not, naming the value and the limit.
     */
    static String refusal(String protocol, String uri, int valueSize) {
        if (Arrays.stream(ClientOptions.Protocol.values()).noneMatch(p -> p.option().equals(protocol))) {
            return null;
        }
        try (KeyValueClient client = KeyValueClient.connect(ClientOptions.of(URI.create(uri)).withPoolSize(1)
                .withProtocol(ClientOptions.Protocol.fromOption(protocol)))) {
            int limit = ((PooledClient) client).storeInfo().maxValueLength();
            return (long) valueSize + KEY_ROOM > limit ? "value size " + valueSize + " B with a YCSB key and record"
                    + " encoding exceeds the " + protocol + " server's limit of " + limit + " B (with a 1-byte key)" : null;
        }
    }
}
