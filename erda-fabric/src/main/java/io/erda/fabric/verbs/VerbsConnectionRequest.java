package io.erda.fabric.verbs;

import io.erda.fabric.ConnectionRequest;
import io.erda.fabric.Endpoint;
import io.erda.fabric.FabricException;
import io.erda.ffm.verbs.QpInfo;
import io.erda.ffm.verbs.QpInfoExchange;
import java.io.IOException;
import java.net.URI;
import java.nio.channels.SocketChannel;
import java.util.concurrent.atomic.AtomicBoolean;

/** A client's QP info, waiting for the listener's owner to accept it with an endpoint or to reject it. */
final class VerbsConnectionRequest implements ConnectionRequest {
    private final VerbsFabric fabric;
    private final SocketChannel channel;
    private final QpInfo remote;
    private final ConnectMessage message;
    private final URI peer;
    private final AtomicBoolean answered = new AtomicBoolean();

    VerbsConnectionRequest(VerbsFabric fabric, SocketChannel channel, QpInfo remote, ConnectMessage message, URI peer) {
        this.fabric = fabric;
        this.channel = channel;
        this.remote = remote;
        this.message = message;
        this.peer = peer;
    }

    @Override
    public URI peer() {
        return peer;
    }

    @Override
    public byte[] privateData() {
        return message.payload().clone();
    }

    @Override
    public void accept(Endpoint endpoint, byte[] replyPrivateData) throws FabricException {
        if (!(endpoint instanceof VerbsEndpoint verbsEndpoint) || endpoint.fabric() != fabric) {
            throw new FabricException("accept needs an endpoint of the listener's verbs fabric, got " + endpoint);
        }
        if (!answered.compareAndSet(false, true)) {
            throw new FabricException("connection request from " + peer + " was already answered");
        }
        verbsEndpoint.accept(channel, remote, message, peer, replyPrivateData);
    }

    @Override
    public void reject(String reason) {
        if (!answered.compareAndSet(false, true)) {
            return;
        }
        try (channel) {
            QpInfoExchange.write(channel, new QpInfo(0, 0, new byte[QpInfo.GID_LENGTH], 0, ConnectMessage.reject(reason).encode()));
        } catch (IOException e) {
            // the client went away: nobody to tell
        }
    }
}
