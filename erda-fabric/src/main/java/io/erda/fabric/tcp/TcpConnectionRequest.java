package io.erda.fabric.tcp;

import io.erda.fabric.ConnectionRequest;
import io.erda.fabric.Endpoint;
import io.erda.fabric.FabricException;
import io.erda.fabric.tcp.wire.FrameChannel;
import io.erda.fabric.tcp.wire.FrameHeader;
import io.erda.fabric.tcp.wire.WireOpcode;
import java.io.IOException;
import java.net.URI;
import java.util.concurrent.atomic.AtomicBoolean;

/** A CONNECT whose two sockets have both arrived at a listener. */
final class TcpConnectionRequest implements ConnectionRequest {
    private final TcpFabric fabric;
    private final FrameChannel fwd;
    private final FrameChannel rev;
    private final long peerRnrNanos;
    private final long peerTimeoutNanos;
    private final byte[] privateData;
    private final URI peer;
    private final AtomicBoolean answered = new AtomicBoolean();

    TcpConnectionRequest(TcpFabric fabric, FrameChannel fwd, FrameChannel rev, long peerRnrNanos, long peerTimeoutNanos,
                         byte[] privateData, URI peer) {
        this.fabric = fabric;
        this.fwd = fwd;
        this.rev = rev;
        this.peerRnrNanos = peerRnrNanos;
        this.peerTimeoutNanos = peerTimeoutNanos;
        this.privateData = privateData;
        this.peer = peer;
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
    public void accept(Endpoint endpoint, byte[] replyPrivateData) {
        if (!(endpoint instanceof TcpEndpoint tcp) || tcp.fabric() != fabric) {
            throw new FabricException("endpoint " + endpoint + " does not belong to the listener's tcp fabric");
        }
        answer();
        tcp.acceptFrom(fwd, rev, peerRnrNanos, peerTimeoutNanos, privateData, peer, replyPrivateData);
    }

    @Override
    public void reject(String reason) {
        answer();
        try {
            FrameHeader h = new FrameHeader();
            var text = FrameChannel.text(reason);
            fwd.write(h.reset(WireOpcode.REJECT).payloadLength(text.remaining()), text);
        } catch (IOException e) {
            TcpFabric.LOG.log(System.Logger.Level.DEBUG, "could not tell " + peer + " it was rejected: " + e);
        } finally {
            close();
        }
    }

    private void answer() {
        if (!answered.compareAndSet(false, true)) {
            throw new FabricException("connection request from " + peer + " was already answered");
        }
    }

    void close() {
        fwd.close();
        rev.close();
    }

    boolean isAnswered() {
        return answered.get();
    }
}
