package io.erda.fabric.verbs;

import io.erda.fabric.ConnectionRequest;
import io.erda.fabric.Endpoint;
import io.erda.fabric.FabricException;
import io.erda.ffm.verbs.VerbsException;
import java.net.URI;
import java.util.concurrent.atomic.AtomicBoolean;

/** A CONNECT_REQUEST (its new id and the client's envelope), waiting to be accepted with an endpoint or rejected. */
final class RdmaCmConnectionRequest implements ConnectionRequest {
    private final VerbsFabric fabric;
    private final CmConnection connection;
    private final CmPrivateData request;
    private final URI peer;
    private final AtomicBoolean answered = new AtomicBoolean();

    RdmaCmConnectionRequest(VerbsFabric fabric, CmConnection connection, CmPrivateData request, URI peer) {
        this.fabric = fabric;
        this.connection = connection;
        this.request = request;
        this.peer = peer;
    }

    @Override
    public URI peer() {
        return peer;
    }

    @Override
    public byte[] privateData() {
        return request.payload().clone();
    }

    @Override
    public void accept(Endpoint endpoint, byte[] replyPrivateData) throws FabricException {
        if (!(endpoint instanceof VerbsEndpoint verbsEndpoint) || endpoint.fabric() != fabric) {
            throw new FabricException("accept needs an endpoint of the listener's verbs fabric, got " + endpoint);
        }
        if (!answered.compareAndSet(false, true)) {
            throw new FabricException("connection request from " + peer + " was already answered");
        }
        verbsEndpoint.accept(connection, request, peer, replyPrivateData);
    }

    @Override
    public void reject(String reason) {
        if (answered.compareAndSet(false, true)) {
            try {
                connection.reject(reason);
            } catch (VerbsException e) {
                // the client went away: nobody to tell
            }
        }
    }
}
