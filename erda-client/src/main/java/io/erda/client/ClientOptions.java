package io.erda.client;

import io.erda.protocol.ConnectData;
import io.erda.fabric.Endpoint;
import java.net.URI;
import java.time.Duration;
import java.util.Objects;
import java.util.function.Function;

/**
 * How to connect.
 *
 * @param uri               the server: {@code tcp://host:port} or {@code shm:///dir}
 * @param protocol          which protocol to speak: Erda, or a baseline of paper §5.1
 * @param poolSize          most connections held at once; a call blocks while all are in use
 * @param endpointDecorator applied to every endpoint right after it is created, before it connects (tests wrap
 *                          endpoints in a {@code FaultInjectingEndpoint})
 * @param operationTimeout  longest wait for one completion or reply
 * @param readRetryBudget   how long a GET retries one-sided when neither version of an object is complete before
 *                          it asks the server two-sided; null means the server's lease plus a margin, by when the
 *                          server has rolled a dead writer back (docs/ARCHITECTURE.md, [leases])
 * @param replyBufferBytes  size of each posted receive: bounds the value a two-sided GET can return
 */
public record ClientOptions(URI uri, Protocol protocol, int poolSize, Function<Endpoint, Endpoint> endpointDecorator,
                            Duration operationTimeout, Duration readRetryBudget, int replyBufferBytes) {

    /** Client protocols, each with its own {@link KeyValueClient} (see {@link KeyValueClient#connect}). */
    public enum Protocol {
        /** {@link ErdaClient}. */
        ERDA(ConnectData.PROTOCOL_ERDA),
        /** {@link RedoLogClient}. */
        REDO_LOG(ConnectData.PROTOCOL_REDO_LOG),
        /** {@link ReadAfterWriteClient}. */
        READ_AFTER_WRITE(ConnectData.PROTOCOL_READ_AFTER_WRITE),
        /** {@link RdmpClient}: RDMP-KV's RDMA-HERD. */
        HERD(ConnectData.PROTOCOL_HERD),
        /** {@link RdmpClient}: RDMP-KV's RDMP-SA. */
        RDMP_SA(ConnectData.PROTOCOL_RDMP_SA),
        /** {@link RdmpClient}: RDMP-KV's RDMP-CC. */
        RDMP_CC(ConnectData.PROTOCOL_RDMP_CC);

        private final int code;

        Protocol(int code) {
            this.code = code;
        }

        /** The protocol number in the connect private data. */
        public int code() {
            return code;
        }

        /**
         * The name tools use for it: {@code erda}, {@code redo-log}, {@code read-after-write}, {@code herd},
         * {@code rdmp-sa}, {@code rdmp-cc}.
         */
        public String option() {
            return name().toLowerCase(java.util.Locale.ROOT).replace('_', '-');
        }

        /** The protocol named {@code name} (as {@link #option()}, any case); else an error naming the choices. */
        public static Protocol fromOption(String name) {
            for (Protocol p : values()) {
                if (p.option().equalsIgnoreCase(name)) {
                    return p;
                }
            }
            throw new IllegalArgumentException("protocol '" + name + "' is not one of "
                    + java.util.Arrays.stream(values()).map(Protocol::option).toList());
        }
    }

    public static final int DEFAULT_POOL_SIZE = 4;
    public static final Duration DEFAULT_OPERATION_TIMEOUT = Duration.ofSeconds(30);
    /** Enough for a 1 MiB value plus headers in a two-sided GET reply. */
    public static final int DEFAULT_REPLY_BUFFER_BYTES = (1 << 20) + 4096;

    public ClientOptions {
        Objects.requireNonNull(uri, "uri");
        Objects.requireNonNull(protocol, "protocol");
        Objects.requireNonNull(endpointDecorator, "endpointDecorator");
        Objects.requireNonNull(operationTimeout, "operationTimeout");
        if (poolSize < 1) {
            throw new IllegalArgumentException("pool size " + poolSize + " must be at least 1");
        }
        if (replyBufferBytes < 4096) {
            throw new IllegalArgumentException("reply buffer " + replyBufferBytes + " bytes is below 4096");
        }
    }

    public static ClientOptions of(URI uri) {
        return new ClientOptions(uri, Protocol.ERDA, DEFAULT_POOL_SIZE, Function.identity(), DEFAULT_OPERATION_TIMEOUT,
                null, DEFAULT_REPLY_BUFFER_BYTES);
    }

    public ClientOptions withProtocol(Protocol newProtocol) {
        return new ClientOptions(uri, newProtocol, poolSize, endpointDecorator, operationTimeout, readRetryBudget,
                replyBufferBytes);
    }

    public ClientOptions withPoolSize(int size) {
        return new ClientOptions(uri, protocol, size, endpointDecorator, operationTimeout, readRetryBudget, replyBufferBytes);
    }

    public ClientOptions withEndpointDecorator(Function<Endpoint, Endpoint> decorator) {
        return new ClientOptions(uri, protocol, poolSize, decorator, operationTimeout, readRetryBudget, replyBufferBytes);
    }

    public ClientOptions withOperationTimeout(Duration timeout) {
        return new ClientOptions(uri, protocol, poolSize, endpointDecorator, timeout, readRetryBudget, replyBufferBytes);
    }

    public ClientOptions withReadRetryBudget(Duration budget) {
        return new ClientOptions(uri, protocol, poolSize, endpointDecorator, operationTimeout, budget, replyBufferBytes);
    }

    public ClientOptions withReplyBufferBytes(int bytes) {
        return new ClientOptions(uri, protocol, poolSize, endpointDecorator, operationTimeout, readRetryBudget, bytes);
    }
}
