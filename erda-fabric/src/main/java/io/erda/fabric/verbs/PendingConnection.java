package io.erda.fabric.verbs;

import io.erda.fabric.ConnectionRequest;
import io.erda.fabric.Endpoint;
import io.erda.fabric.FabricException;
import java.net.URI;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * What both connection managers' requests share: the peer and its private data, an accept that takes only an
 * endpoint of the listener's fabric, and one answer, accept or reject.
 */
abstract class PendingConnection implements ConnectionRequest {
    final VerbsFabric fabric;
    private final URI peer;
    private final byte[] privateData;
    private final AtomicBoolean answered = new AtomicBoolean();

    PendingConnection(VerbsFabric fabric, URI peer, byte[] privateData) {
        this.fabric = fabric;
        this.peer = peer;
        this.privateData = privateData.clone();
    }

    @Override
    public URI peer() {
        return peer;
    }

    @Override
    public byte[] privateData() {
        return privateData.clone();
    }

    @Override
    public final void accept(Endpoint endpoint, byte[] replyPrivateData) throws FabricException {
        if (!(endpoint instanceof VerbsEndpoint verbsEndpoint) || endpoint.fabric() != fabric) {
            throw new FabricException("accept needs an endpoint of the listener's verbs fabric, got " + endpoint);
        }
        if (!answered.compareAndSet(false, true)) {
            throw new FabricException("connection request from " + peer + " was already answered");
        }
        accept(verbsEndpoint, replyPrivateData);
    }

    /** Connects {@code endpoint} to the peer; the request was not answered before. */
    abstract void accept(VerbsEndpoint endpoint, byte[] replyPrivateData);

    @Override
    public final void reject(String reason) {
        if (answered.compareAndSet(false, true)) {
            refuse(reason);
        }
    }

    /** Tells the peer {@code reason}; the request was not answered before. */
    abstract void refuse(String reason);
}
