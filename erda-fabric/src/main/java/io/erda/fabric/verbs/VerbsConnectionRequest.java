package io.erda.fabric.verbs;

import io.erda.ffm.verbs.QpInfo;
import io.erda.ffm.verbs.QpInfoExchange;
import java.io.IOException;
import java.net.URI;
import java.nio.channels.SocketChannel;

/** A client's QP info, waiting for the listener's owner to accept it with an endpoint or to reject it. */
final class VerbsConnectionRequest extends PendingConnection {
    private final SocketChannel channel;
    private final QpInfo remote;
    private final ConnectMessage message;

    VerbsConnectionRequest(VerbsFabric fabric, SocketChannel channel, QpInfo remote, ConnectMessage message, URI peer) {
        super(fabric, peer, message.payload());
        this.channel = channel;
        this.remote = remote;
        this.message = message;
    }

    @Override
    void accept(VerbsEndpoint endpoint, byte[] replyPrivateData) {
        endpoint.accept(channel, remote, message, peer(), replyPrivateData);
    }

    @Override
    void refuse(String reason) {
        try (channel) {
            QpInfoExchange.write(channel, new QpInfo(0, 0, new byte[QpInfo.GID_LENGTH], 0, ConnectMessage.reject(reason).encode()));
        } catch (IOException e) {
            // the client went away: nobody to tell
        }
    }
}
