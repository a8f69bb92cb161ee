package io.erda.fabric.verbs;

import io.erda.fabric.ConnectionRequest;
import io.erda.fabric.FabricException;
import io.erda.fabric.Listener;
import io.erda.ffm.verbs.QpInfo;
import io.erda.ffm.verbs.QpInfoExchange;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.URI;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * The TCP side of connection set-up: a server socket on the URI's host:port (port 0 picks one). An acceptor
 * (a virtual thread parked in accept) reads each client's QP info on a virtual thread of its own, so a slow
 * client cannot hold up the others, and queues it as a {@link ConnectionRequest}.
 */
final class VerbsListener implements Listener {
    private final VerbsFabric fabric;
    private final ServerSocketChannel server;
    private final URI uri;
    private final LinkedBlockingQueue<VerbsConnectionRequest> requests = new LinkedBlockingQueue<>();
    private final AtomicBoolean closed = new AtomicBoolean();

    private VerbsListener(VerbsFabric fabric, ServerSocketChannel server, URI uri) {
        this.fabric = fabric;
        this.server = server;
        this.uri = uri;
    }

    static VerbsListener bind(VerbsFabric fabric, URI uri) {
        if (uri.getHost() == null || uri.getPort() < 0) {
            throw new FabricException("verbs listen URI " + uri + " needs host:port (port 0 picks one)");
        }
        try {
            ServerSocketChannel server = ServerSocketChannel.open();
            server.bind(new InetSocketAddress(uri.getHost(), uri.getPort()));
            int port = ((InetSocketAddress) server.getLocalAddress()).getPort();
            VerbsListener listener = new VerbsListener(fabric, server,
                    URI.create("verbs://" + hostPart(uri.getHost()) + ":" + port));
            Thread.ofVirtual().name("verbs-listener-" + port).start(listener::acceptLoop);
            return listener;
        } catch (IOException e) {
            throw new FabricException("cannot listen on " + uri + ": " + e.getMessage(), e);
        }
    }

    static String hostPart(String host) {
        return host.contains(":") && !host.startsWith("[") ? "[" + host + "]" : host;
    }

    private void acceptLoop() {
        while (!closed.get()) {
            try {
                SocketChannel channel = server.accept();
                Thread.ofVirtual().name("verbs-connect-request").start(() -> readRequest(channel));
            } catch (IOException e) {
                return; // closed
            }
        }
    }

    private void readRequest(SocketChannel channel) {
        try {
            QpInfo remote = QpInfoExchange.read(channel);
            ConnectMessage message = ConnectMessage.decode(remote.privateData(), ConnectMessage.REQUEST);
            InetSocketAddress from = (InetSocketAddress) channel.getRemoteAddress();
            URI peer = URI.create("verbs://" + hostPart(from.getHostString()) + ":" + from.getPort());
            requests.add(new VerbsConnectionRequest(fabric, channel, remote, message, peer));
        } catch (IOException | RuntimeException e) {
            try {
                channel.close(); // not a verbs client, or it went away: nothing to answer
            } catch (IOException ignored) {
                // closing anyway
            }
        }
    }

    @Override
    public URI uri() {
        return uri;
    }

    @Override
    public ConnectionRequest accept(long timeout, TimeUnit unit) throws InterruptedException {
        return requests.poll(timeout, unit);
    }

    @Override
    public void close() {
        if (closed.compareAndSet(false, true)) {
            try {
                server.close();
            } catch (IOException e) {
                // the acceptor ends either way
            }
            VerbsConnectionRequest pending;
            while ((pending = requests.poll()) != null) {
                pending.reject("listener closed");
            }
            fabric.forget(this);
        }
    }
}
