package io.erda.cluster.harness;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

/**
 * A TCP relay between some clients and ZooKeeper that can be cut, for tests ({@code ClusterFencingTest}) and
 * erda-bench's cluster nemesis ("reader | ZooKeeper": its readers share a network namespace with its writers, so a
 * route cannot tell their ZooKeeper traffic apart). Clients connect to {@link #port()} on the loopback address. While
 * cut, bytes are read and dropped both ways and the connections stay open, as on a partition (nothing tells either
 * side; the client notices only by its own timeouts). Healing closes every connection that lived through the cut,
 * whose streams lost bytes, so the clients reconnect; new connections pass again.
 */
public final class ZkLink implements AutoCloseable {
    private final ServerSocket listener;
    private final String upstreamHost;
    private final int upstreamPort;
    private final List<Socket> sockets = new CopyOnWriteArrayList<>();
    private volatile boolean cut;
    private volatile boolean closed;

    /** A link to the ZooKeeper on this host's loopback address at {@code upstreamPort}. */
    public ZkLink(int upstreamPort) throws IOException {
        this("127.0.0.1", upstreamPort);
    }

    public ZkLink(String upstreamHost, int upstreamPort) throws IOException {
        this.upstreamHost = upstreamHost;
        this.upstreamPort = upstreamPort;
        this.listener = new ServerSocket(0, 50, InetAddress.getLoopbackAddress());
        Thread.ofVirtual().name("zk-link-accept").start(this::accept);
    }

    public int port() {
        return listener.getLocalPort();
    }

    /** From now on nothing passes, either way. */
    public void cut() {
        cut = true;
    }

    /** Closes the connections the cut damaged; from now on bytes pass again. */
    public synchronized void heal() {
        if (!cut) {
            return;
        }
        for (Socket s : sockets) {
            closeQuietly(s);
        }
        sockets.clear();
        cut = false;
    }

    private void accept() {
        while (!closed) {
            try {
                Socket down = listener.accept();
                Socket up;
                try {
                    up = new Socket(upstreamHost, upstreamPort);
                } catch (IOException unreachable) {
                    closeQuietly(down); // ZooKeeper down or restarting: the client tries again
                    continue;
                }
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
        if (!cut) {
            closeQuietly(to);
        }
        sockets.remove(from);
    }

    private static void closeQuietly(Socket s) {
        try {
            s.close();
        } catch (IOException e) {
            // already closed
        }
    }

    @Override
    public void close() throws IOException {
        closed = true;
        listener.close();
        for (Socket s : sockets) {
            closeQuietly(s);
        }
    }
}
