package io.erda.fabric.verbs;

import io.erda.ffm.verbs.VerbsException;
import java.net.URI;

/** A CONNECT_REQUEST (its new id and the client's envelope), waiting to be accepted with an endpoint or rejected. */
final class RdmaCmConnectionRequest extends PendingConnection {
    private final CmConnection connection;
    private final CmPrivateData request;

    RdmaCmConnectionRequest(VerbsFabric fabric, CmConnection connection, CmPrivateData request, URI peer) {
        super(fabric, peer, request.payload());
        this.connection = connection;
        this.request = request;
    }

    @Override
    void accept(VerbsEndpoint endpoint, byte[] replyPrivateData) {
        endpoint.accept(connection, request, peer(), replyPrivateData);
    }

    @Override
    void refuse(String reason) {
        try {
            connection.reject(reason);
        } catch (VerbsException e) {
            // the client went away: nobody to tell
        }
    }
}
