package io.erda.fabric.tcp;

import io.erda.fabric.ConnectionRequest;
import io.erda.fabric.FabricException;
import io.erda.fabric.Listener;
import io.erda.fabric.tcp.wire.FrameChannel;
import io.erda.fabric.tcp.wire.FrameHeader;
import io.erda.fabric.tcp.wire.ProtocolViolation;
import io.erda.fabric.tcp.wire.WireOpcode;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.URI;
import java.net.URISyntaxException;
import java.nio.channels.ClosedChannelException;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;

/**
 * Listens for connections ({@code rdma_listen}). Every accepted socket gets a virtual thread that reads its first
 * frame, so a silent or garbage-sending socket never holds up the others; CONNECT and ATTACH of one connection meet
 * here by nonce and then surface as one {@link ConnectionRequest}.
 */
final class TcpListener implements Listener {
    private static final System.Logger LOG = TcpFabric.LOG;

    /** The two sockets of a connection being set up; either may arrive first. */
    private static final class HalfOpen {
        FrameChannel fwd;
        FrameChannel rev;
        long rnrNanos;
        long peerTimeoutNanos;
        byte[] privateData;
    }

    private final TcpFabric fabric;
    private final ServerSocketChannel server;
    private final URI uri;
    private final Map<Long, HalfOpen> halfOpen = new ConcurrentHashMap<>();
    private final Set<FrameChannel> unanswered = ConcurrentHashMap.newKeySet();
    private final LinkedBlockingQueue<TcpConnectionRequest> requests = new LinkedBlockingQueue<>();
    private volatile boolean closed;

    TcpListener(TcpFabric fabric, URI listenUri) {
        this.fabric = fabric;
        String host = listenUri.getHost() == null ? "0.0.0.0" : listenUri.getHost();
        try {
            server = ServerSocketChannel.open();
            server.bind(new InetSocketAddress(host, Math.max(listenUri.getPort(), 0)), 256);
            int port = ((InetSocketAddress) server.getLocalAddress()).getPort();
            uri = new URI("tcp", null, host, port, null, null, null);
        } catch (IOException | URISyntaxException e) {
            throw new FabricException("cannot listen on " + listenUri + ": " + e, e);
        }
        fabric.startEngineThread("erda-tcp-listener-" + uri.getPort(), this::acceptSockets);
    }

    @Override
    public URI uri() {
        return uri;
    }

    private void acceptSockets() {
        while (!closed) {
            try {
                SocketChannel socket = server.accept();
                Thread.ofVirtual().name("erda-tcp-handshake").start(() -> handshake(socket));
            } catch (ClosedChannelException e) {
                return;
            } catch (IOException e) {
                LOG.log(System.Logger.Level.WARNING, "accept on " + uri + " failed: " + e);
            }
        }
    }

    private void handshake(SocketChannel socket) {
        FrameChannel channel = null;
        String from = "?";
        try {
            from = String.valueOf(socket.getRemoteAddress());
            channel = new FrameChannel(socket);
            unanswered.add(channel);
            if (closed) {
                throw new IOException("listener closed");
            }
            FrameHeader h = new FrameHeader().readFrom(socket);
            switch (h.opcode()) {
                case WireOpcode.CONNECT -> {
                    byte[] data = channel.readBytes(h.payloadLength());
                    meet(h.sequence(), half -> {
                        half.fwd = channel(half.fwd, socket, h);
                        half.rnrNanos = Math.max(0, h.compareAdd());
                        half.peerTimeoutNanos = Math.max(0, h.swap());
                        half.privateData = data;
                    });
                }
                case WireOpcode.ATTACH -> meet(h.sequence(), half -> half.rev = channel(half.rev, socket, h));
                default -> throw new ProtocolViolation("expected CONNECT or ATTACH, got " + h);
            }
        } catch (IOException | RuntimeException e) {
            if (!closed) {
                LOG.log(System.Logger.Level.WARNING, "closing connection attempt from " + from + " on " + uri + ": " + e.getMessage());
            }
            if (channel != null) {
                unanswered.remove(channel);
                channel.close();
            } else {
                try {
                    socket.close();
                } catch (IOException ignored) {
                    // the attempt is dropped either way
                }
            }
        }
    }

    private FrameChannel channel(FrameChannel already, SocketChannel socket, FrameHeader h) {
        if (already != null) {
            throw new FabricException("duplicate " + h + " for a connection being set up");
        }
        for (FrameChannel c : unanswered) {
            if (c.socket() == socket) {
                return c;
            }
        }
        throw new FabricException("socket of " + h + " is no longer tracked (listener closing)");
    }

    private void meet(long nonce, java.util.function.Consumer<HalfOpen> fill) throws IOException {
        HalfOpen half = halfOpen.computeIfAbsent(nonce, k -> new HalfOpen());
        TcpConnectionRequest ready = null;
        synchronized (half) {
            fill.accept(half);
            if (half.fwd != null && half.rev != null) {
                halfOpen.remove(nonce);
                unanswered.remove(half.fwd);
                unanswered.remove(half.rev);
                ready = new TcpConnectionRequest(fabric, half.fwd, half.rev, half.rnrNanos, half.peerTimeoutNanos, half.privateData,
                        TcpEndpoint.uriOf(half.fwd.socket()));
            }
        }
        if (ready != null) {
            requests.add(ready);
            if (closed) {
                drain();
            }
        }
    }

    @Override
    public ConnectionRequest accept(long timeout, TimeUnit unit) throws InterruptedException {
        if (closed) {
            throw new FabricException("listener on " + uri + " is closed");
        }
        return requests.poll(timeout, unit);
    }

    private void drain() {
        TcpConnectionRequest r;
        while ((r = requests.poll()) != null) {
            if (!r.isAnswered()) {
                r.close();
            }
        }
    }

    @Override
    public void close() {
        if (closed) {
            return;
        }
        closed = true;
        try {
            server.close();
        } catch (IOException ignored) {
            // nothing more to accept either way
        }
        for (FrameChannel c : unanswered) {
            c.close();
        }
        unanswered.clear();
        halfOpen.clear();
        drain();
        fabric.untrack(this);
    }
}
