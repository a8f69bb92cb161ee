package io.erda.fabric.shm;

import io.erda.fabric.ConnectionRequest;
import io.erda.fabric.Endpoint;
import io.erda.fabric.FabricException;
import io.erda.fabric.Listener;
import java.io.IOException;
import java.net.StandardProtocolFamily;
import java.net.URI;
import java.net.UnixDomainSocketAddress;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;

/** Listens on {@code dir/erda.sock}; a virtual thread accepts sockets and reads their connect requests. */
final class ShmListener implements Listener {
    private final ShmFabric fabric;
    private final URI uri;
    private final Path socketPath;
    private final ServerSocketChannel server;
    private final LinkedBlockingQueue<Request> requests = new LinkedBlockingQueue<>();
    private volatile boolean closed;

    ShmListener(ShmFabric fabric, URI uri, Path dir, ShmFiles files) {
        this.fabric = fabric;
        this.uri = uri;
        this.socketPath = dir.resolve(ShmFabric.SOCKET_FILE);
        try {
            Files.deleteIfExists(socketPath); // a stale socket of a dead listener
            server = ServerSocketChannel.open(StandardProtocolFamily.UNIX);
            server.bind(UnixDomainSocketAddress.of(socketPath));
            files.restrict(socketPath); // connecting needs write permission on the socket file
        } catch (IOException e) {
            throw new FabricException("cannot listen on " + socketPath + ": " + e, e);
        }
        Thread.ofVirtual().name("erda-shm-listener").start(this::acceptLoop);
    }

    private void acceptLoop() {
        while (!closed) {
            SocketChannel ch;
            try {
                ch = server.accept();
            } catch (IOException e) {
                return;
            }
            Thread.ofVirtual().start(() -> readRequest(new ShmConnection(ch)));
        }
    }

    private void readRequest(ShmConnection connection) {
        try {
            Handshake.Request r = Handshake.readRequest(connection.in);
            requests.add(new Request(connection, r));
            if (closed) {
                rejectPending();
            }
        } catch (IOException e) {
            connection.closeSocket();
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

    private void rejectPending() {
        Request r;
        while ((r = requests.poll()) != null) {
            r.reject("listener " + uri + " closed");
        }
    }

    /** Shutdown hook: the JVM exits with this listener open; a later listener would replace the file, but leave nothing. */
    void deleteSocketFile() {
        try {
            Files.deleteIfExists(socketPath);
        } catch (IOException e) {
            // best effort
        }
    }

    @Override
    public void close() {
        closed = true;
        try {
            server.close();
            Files.deleteIfExists(socketPath);
        } catch (IOException e) {
            // best effort: the socket file is only a name
        }
        rejectPending();
        fabric.forget(this);
    }

    private final class Request implements ConnectionRequest {
        private final ShmConnection connection;
        private final Handshake.Request request;

        Request(ShmConnection connection, Handshake.Request request) {
            this.connection = connection;
            this.request = request;
        }

        @Override
        public URI peer() {
            return ShmFabric.uriOf(request.home());
        }

        @Override
        public byte[] privateData() {
            return request.privateData().clone();
        }

        @Override
        public void accept(Endpoint endpoint, byte[] replyPrivateData) {
            Handshake.checkPrivateData(replyPrivateData);
            fabric.endpointOf(endpoint).accept(connection, request, replyPrivateData);
        }

        @Override
        public void reject(String reason) {
            try {
                Handshake.writeReject(connection.out, reason);
            } catch (IOException e) {
                // the peer is gone already
            }
            connection.closeSocket();
        }
    }
}
