package io.erda.cluster;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.URI;
import java.nio.ByteBuffer;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.logging.Level;
import java.util.logging.Logger;

/**
 * The member's side of {@link DeathWatch}: a TCP port, published in its registration ({@code alive HOST:PORT}), whose
 * connections this process closes only when it ends (or the member closes). On accepting one it writes the session
 * of its registration (8 bytes, big-endian), so a watcher knows which incarnation it watches, and then only reads,
 * which returns only when the watcher leaves: nothing the watcher sent is ever left unread, so when this process is
 * killed its kernel ends each connection with a FIN (an orderly end of stream at the watcher), not a reset.
 */
final class LivenessPort implements AutoCloseable {
    private static final Logger LOG = Logger.getLogger(ClusterServer.class.getName());

    private final ServerSocket listener;
    private final long session;
    private final List<Socket> accepted = new CopyOnWriteArrayList<>();
    private volatile boolean closed;

    /**
     * Listens on the host of {@code fabricUri} (the address the other members reach this one at; loopback for a
     * fabric URI without a host, such as shm's), on a free port. {@code session} is the member's, which its
     * registration will be made under.
     */
    LivenessPort(URI fabricUri, long session) throws IOException {
        this.session = session;
        String host = fabricUri.getHost();
        InetAddress address = host == null || host.isEmpty() ? InetAddress.getLoopbackAddress() : InetAddress.getByName(host);
        if (address.isAnyLocalAddress()) {
            address = InetAddress.getLoopbackAddress();
        }
        listener = new ServerSocket();
        listener.bind(new InetSocketAddress(address, 0));
        Thread.ofPlatform().daemon().name("erda-cluster-liveness").start(this::acceptLoop);
    }

    /** The address published in the registration. */
    InetSocketAddress address() {
        return (InetSocketAddress) listener.getLocalSocketAddress();
    }

    private void acceptLoop() {
        while (!closed) {
            Socket socket;
            try {
                socket = listener.accept();
            } catch (IOException e) {
                if (!closed) {
                    LOG.log(Level.WARNING, "liveness port: accept failed", e);
                }
                return;
            }
            accepted.add(socket);
            Thread.ofVirtual().name("erda-cluster-liveness-conn").start(() -> serve(socket));
        }
    }

    private void serve(Socket socket) {
        try (socket) {
            socket.setTcpNoDelay(true);
            OutputStream out = socket.getOutputStream();
            out.write(ByteBuffer.allocate(Long.BYTES).putLong(session).array());
            out.flush();
            InputStream in = socket.getInputStream();
            byte[] sink = new byte[64];
            while (in.read(sink) >= 0) {
                // a watcher sends nothing; whatever comes is read, so none is left unread when the process ends
            }
        } catch (IOException e) {
            // the watcher went away, or the member is closing
        } finally {
            accepted.remove(socket);
        }
    }

    @Override
    public void close() {
        closed = true;
        try {
            listener.close();
        } catch (IOException e) {
            LOG.log(Level.FINE, "liveness port close", e);
        }
        for (Socket socket : accepted) {
            try {
                socket.close();
            } catch (IOException e) {
                LOG.log(Level.FINE, "liveness connection close", e);
            }
        }
    }
}
