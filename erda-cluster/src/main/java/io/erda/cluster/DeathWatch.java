package io.erda.cluster;

import java.io.DataInputStream;
import java.io.EOFException;
import java.io.IOException;
import java.io.InputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.util.HashSet;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.LongConsumer;
import java.util.logging.Level;
import java.util.logging.Logger;

/**
 * Sees a member's process end the moment it ends, where it can ([cluster] "Failover"): a TCP connection to each
 * other member's {@link LivenessPort}, which that process closes only by ending. Once the member has said which
 * session it serves under (8 bytes, so a port reused by another process is never taken for it), an orderly end of
 * stream on the connection (a FIN) means that process is gone: killed, halted, crashed or closed, its connections
 * and memory registrations ended with it. That session then counts as gone at once, as a lease that ran out does
 * ({@link LeaseWatch}), without waiting out the lease. Anything else (a refused or timed-out connect, a reset, a
 * silent partition, a paused process) proves nothing and is left to the lease: the connection is dropped and tried
 * again on a later look. The watcher never writes, so it leaves the member nothing unread.
 */
final class DeathWatch implements AutoCloseable {
    private static final Logger LOG = Logger.getLogger(ClusterServer.class.getName());
    private static final int CONNECT_TIMEOUT_MILLIS = 500;
    /** How long after a connection to a session failed it is tried again. */
    private static final long RETRY_NANOS = 1_000_000_000L;

    /** A registration to watch: its member and the address of its liveness port. */
    record Target(int member, InetSocketAddress address) {
    }

    private final int self;
    private final LongConsumer ended;
    /** Sessions watched now, with their connection (null while connecting). */
    private final Map<Long, Socket> watching = new ConcurrentHashMap<>();
    /** When a session's last connection failed (System.nanoTime). */
    private final Map<Long, Long> failedAt = new ConcurrentHashMap<>();
    private final Set<Long> gone = ConcurrentHashMap.newKeySet();
    private volatile boolean closed;

    /** {@code self}: this member's id, not watched; {@code ended}: told each session seen to end, once. */
    DeathWatch(int self, LongConsumer ended) {
        this.self = self;
        this.ended = ended;
    }

    /** The sessions whose processes were seen to end. */
    Set<Long> ended() {
        return Set.copyOf(gone);
    }

    /**
     * Watches every registration in {@code registrations} (session to target) not watched yet (or tried again after
     * a failure), and stops watching sessions no longer registered.
     */
    void watch(Map<Long, Target> registrations) {
        if (closed) {
            return;
        }
        for (Long session : new HashSet<>(watching.keySet())) {
            if (!registrations.containsKey(session)) {
                Socket socket = watching.remove(session);
                closeQuietly(socket);
            }
        }
        failedAt.keySet().retainAll(registrations.keySet());
        long now = System.nanoTime();
        registrations.forEach((session, target) -> {
            if (target.member() == self || gone.contains(session) || watching.containsKey(session)) {
                return;
            }
            Long failed = failedAt.get(session);
            if (failed != null && now - failed < RETRY_NANOS) {
                return;
            }
            watching.put(session, new Socket());
            Thread.ofVirtual().name("erda-cluster-deathwatch-" + target.member()).start(() -> watchOne(session, target));
        });
    }

    private void watchOne(long session, Target target) {
        Socket socket = watching.get(session);
        if (socket == null) {
            return;
        }
        try (socket) {
            socket.connect(target.address(), CONNECT_TIMEOUT_MILLIS);
            InputStream in = socket.getInputStream();
            long said = new DataInputStream(in).readLong();
            if (said != session) {
                throw new IOException("the port of server " + target.member() + "'s session 0x" + Long.toHexString(session)
                        + " answered for session 0x" + Long.toHexString(said));
            }
            byte[] sink = new byte[64];
            while (in.read(sink) >= 0) {
                // the member sends nothing more
            }
            if (!closed && watching.get(session) == socket && gone.add(session)) {
                LOG.info(() -> "server " + self + ": server " + target.member() + " (session 0x" + Long.toHexString(session)
                        + ") ended: its liveness connection closed");
                ended.accept(session);
            }
        } catch (EOFException beforeItSaid) {
            failed(session, socket); // ended before it named its session: proves nothing of that session
        } catch (IOException e) {
            LOG.log(Level.FINE, "liveness connection to server " + target.member() + " failed (left to its lease)", e);
            failed(session, socket);
        } finally {
            watching.remove(session, socket);
        }
    }

    private void failed(long session, Socket socket) {
        if (watching.get(session) == socket) {
            failedAt.put(session, System.nanoTime());
        }
    }

    private static void closeQuietly(Socket socket) {
        if (socket != null) {
            try {
                socket.close();
            } catch (IOException e) {
                // closing a watch
            }
        }
    }

    @Override
    public void close() {
        closed = true;
        for (Socket socket : watching.values()) {
            closeQuietly(socket);
        }
        watching.clear();
    }
}
