package io.erda.fabric;

import java.time.Duration;
import java.util.Objects;

/**
 * How to create an endpoint ({@code ibv_qp_init_attr}).
 *
 * @param sendQueue    completion queue for send-side work, or null for one of its own
 * @param recvQueue    completion queue for receives, or null for one of its own
 * @param maxSendWr    outstanding send-side requests allowed; posting more throws {@link FabricException}
 * @param maxRecvWr    posted receives allowed
 * @param rnrTimeout   how long a SEND or WRITE_WITH_IMM waits for the peer to post a receive before it fails with
 *                     {@link Status#RNR_RETRY_EXCEEDED} (verbs: rnr_retry x min_rnr_timer)
 * @param connectTimeout how long {@link Endpoint#connect} waits for the peer's side of the handshake (shm: a peer
 *                     that is paused or hung never answers); tcp and verbs bound their connects by their fabric's own
 *                     settings
 */
public record EndpointOptions(CompletionQueue sendQueue, CompletionQueue recvQueue, int maxSendWr, int maxRecvWr,
                              Duration rnrTimeout, Duration connectTimeout) {

    public static final int DEFAULT_MAX_WR = 256;
    public static final Duration DEFAULT_RNR_TIMEOUT = Duration.ofMillis(100);
    public static final Duration DEFAULT_CONNECT_TIMEOUT = Duration.ofSeconds(30);

    public EndpointOptions {
        Objects.requireNonNull(rnrTimeout, "rnrTimeout");
        Objects.requireNonNull(connectTimeout, "connectTimeout");
        if (maxSendWr <= 0 || maxRecvWr <= 0) {
            throw new IllegalArgumentException("queue depths " + maxSendWr + "/" + maxRecvWr + " must be positive");
        }
    }

    public static EndpointOptions defaults() {
        return new EndpointOptions(null, null, DEFAULT_MAX_WR, DEFAULT_MAX_WR, DEFAULT_RNR_TIMEOUT,
                DEFAULT_CONNECT_TIMEOUT);
    }

    public EndpointOptions withQueues(CompletionQueue send, CompletionQueue recv) {
        return new EndpointOptions(send, recv, maxSendWr, maxRecvWr, rnrTimeout, connectTimeout);
    }

    public EndpointOptions withDepth(int send, int recv) {
        return new EndpointOptions(sendQueue, recvQueue, send, recv, rnrTimeout, connectTimeout);
    }

    public EndpointOptions withRnrTimeout(Duration timeout) {
        return new EndpointOptions(sendQueue, recvQueue, maxSendWr, maxRecvWr, timeout, connectTimeout);
    }

    public EndpointOptions withConnectTimeout(Duration timeout) {
        return new EndpointOptions(sendQueue, recvQueue, maxSendWr, maxRecvWr, rnrTimeout, timeout);
    }
}
