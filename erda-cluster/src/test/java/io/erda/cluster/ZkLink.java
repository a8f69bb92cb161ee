package io.erda.cluster;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

/**
 * A TCP link between one client and ZooKeeper that a test can cut: while cut, bytes are read and dropped in both
 * directions and the connections stay open, as on a network partition (nothing tells either side; the client notices
 * only by its own timeouts).
 */
final class ZkLink implements AutoCloseable {
    private final ServerSocket listener;
    private final int upstreamPort;
    private final List<Socket> sockets = new CopyOnWriteArrayList<>();
    private volatile boolean cut;
    private volatile boolean closed;

    ZkLink(int upstreamPort) throws IOException {
        this.upstreamPort = upstreamPort;
        this.listener = new ServerSocket(0, 50, InetAddress.getLoopbackAddress());
        Thread.ofVirtual().name("zk-link-accept").start(this::accept);
    }

    int port() {
        return listener.getLocalPort();
    }

    /** From now on nothing passes, either way. */
    void cut() {
        cut = true;
    }

    private void accept() {
        while (!closed) {
            try {
                Socket down = listener.accept();
                Socket up = new Socket(InetAddress.getLoopbackAddress(), upstreamPort);
                sockets.add(down);
                sockets.add(up);
                Thread.ofVirtual().start(() -> pump(down, up));
                Thread.ofVirtual().start(() -> pump(up, down));
            } catch (IOException e) {
                return;
            }
        }
    }

    private void pump(Socket from, Socket to) {
        byte[] buffer = new byte[8192];
        try (InputStream in = from.getInputStream()) {
            OutputStream out = to.getOutputStream();
            for (int n; (n = in.read(buffer)) >= 0; ) {
                if (!cut) {
                    out.write(buffer, 0, n);
                    out.flush();
                }
            }
        } catch (IOException e) {
            // a side closed
        }
        try {
            if (!cut) {
                to.close();
            }
        } catch (IOException e) {
            // already closed
        }
    }

    @Override
    public void close() throws IOException {
        closed = true;
        listener.close();
        for (Socket s : sockets) {
            s.close();
        }
    }
}
