package io.erda.fabric;

import java.net.URI;

/**
 * A peer asking to connect ({@code RDMA_CM_EVENT_CONNECT_REQUEST}). The listener's owner creates an endpoint,
 * posts its receives, then accepts, so that the peer can never send into an empty receive queue.
 */
public interface ConnectionRequest {

    URI peer();

    byte[] privateData();

    /** Connects {@code endpoint} (unconnected, from the listener's fabric) to the peer; reply private data reaches it. */
    void accept(Endpoint endpoint, byte[] replyPrivateData) throws FabricException;

    /** Refuses the peer; its connect fails with a FabricException carrying {@code reason}. */
    void reject(String reason);
}
