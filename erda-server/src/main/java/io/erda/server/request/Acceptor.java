package io.erda.server.request;

import io.erda.server.platform.DaemonThreads;
import io.erda.fabric.CompletionQueue;
import io.erda.fabric.ConnectionRequest;
import io.erda.fabric.Endpoint;
import io.erda.fabric.EndpointOptions;
import io.erda.fabric.Fabric;
import io.erda.fabric.Listener;
import io.erda.protocol.ConnectData;
import io.erda.protocol.HeadArray;
import io.erda.protocol.WireFormatException;
import io.erda.server.store.StoreStats;
import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;
import java.util.function.UnaryOperator;
import java.util.logging.Logger;

/**
 * The acceptor thread: waits on the listener and turns each connection request into a {@link ServerConnection} of the
 * protocol it names ({@link Protocols}), on the shared completion queues within their {@link CompletionBudget}, or
 * refuses it saying why.
 */
final class Acceptor {
    private static final Logger LOG = Logger.getLogger(Acceptor.class.getName());
    private static final ThreadMXBean CPU = ManagementFactory.getThreadMXBean();
    private static final long IDLE_WAIT_MILLIS = 500;

    private final Listener listener;
    private final Fabric fabric;
    private final CompletionQueue sendQueue;
    private final CompletionQueue recvQueue;
    private final CompletionBudget budget;
    private final Connections connections;
    private final Protocols protocols;
    /** The head array HEAD_STATE carries, for protocols that take it. */
    private final Supplier<HeadArray> headArray;
    private final StoreStats stats;
    /** What a test wraps: each connection request, each connection's handler (identities otherwise). */
    private final UnaryOperator<ConnectionRequest> requestSeam;
    private final UnaryOperator<ProtocolHandler> handlerSeam;
    private volatile boolean running = true;

    Acceptor(Listener listener, Fabric fabric, CompletionQueue sendQueue, CompletionQueue recvQueue,
             CompletionBudget budget, Connections connections, Protocols protocols, Supplier<HeadArray> headArray,
             StoreStats stats, UnaryOperator<ConnectionRequest> requestSeam, UnaryOperator<ProtocolHandler> handlerSeam) {
        this.listener = listener;
        this.fabric = fabric;
        this.sendQueue = sendQueue;
        this.recvQueue = recvQueue;
        this.budget = budget;
        this.connections = connections;
        this.protocols = protocols;
        this.headArray = headArray;
        this.stats = stats;
        this.requestSeam = requestSeam;
        this.handlerSeam = handlerSeam;
    }

    /** Starts the acceptor thread (a daemon). */
    Thread start(DaemonThreads threads) {
        return threads.start("erda-acceptor", this::acceptLoop);
    }

    /** Accepts no more: the thread ends at its next wake-up (or interrupt). */
    void stop() {
        running = false;
    }

    private void acceptLoop() {
        while (running) {
            ConnectionRequest request;
            try {
                request = listener.accept(IDLE_WAIT_MILLIS, TimeUnit.MILLISECONDS);
            } catch (InterruptedException e) {
                continue; // stop() comes first; an interrupt alone is not a stop (see Workers.workLoop)
            } catch (RuntimeException e) {
                if (running) {
                    LOG.warning("accept failed: " + e);
                }
                continue;
            }
            if (request != null) {
                accept(requestSeam.apply(request), CPU.getCurrentThreadCpuTime());
            }
        }
    }

    /**
     * Sets up a connection, or refuses it. Its CPU since {@code cpuStart} is charged just before the client is
     * answered, not after: once answered, the client may say HELLO and a benchmark open a window of the server's
     * counters (ycsb-compare opens it when its client says it is connected); a charge landing in that window would
     * show as server CPU spent on one-sided GETs. What the acceptor does after
     * answering (nothing, or cleaning up a failure) is not charged.
     */
    private void accept(ConnectionRequest request, long cpuStart) {
        ConnectData connect;
        try {
            connect = ConnectData.decode(request.privateData());
        } catch (WireFormatException bad) {
            LOG.warning(() -> "refused " + request.peer() + ": " + bad.getMessage());
            chargeSetup(cpuStart);
            request.reject(bad.getMessage());
            return;
        }
        ServerConnection connection = null;
        ReceiveBuffers buffers = null;
        boolean answered = false;
        try {
            Protocol protocol = protocols.get(connect.protocol());
            buffers = protocol.receiveBuffers().get();
            int sendDepth = 2 * buffers.count() + 64;
            String full = budget.reserve(sendDepth, buffers.count(), connections.count());
            if (full != null) {
                LOG.warning(() -> "refused " + request.peer() + ": " + full);
                chargeSetup(cpuStart);
                request.reject(full);
                buffers.close();
                return;
            }
            Endpoint endpoint;
            try {
                endpoint = fabric.createEndpoint(EndpointOptions.defaults().withQueues(sendQueue, recvQueue)
                        .withDepth(sendDepth, buffers.count()));
            } catch (RuntimeException e) {
                budget.release(sendDepth, buffers.count());
                throw e;
            }
            budget.assign(endpoint, sendDepth, buffers.count());
            ReceiveBuffers taken = buffers;
            connection = new ServerConnection(fabric, endpoint, sendDepth, c -> handlerSeam.apply(protocol.handlers().apply(c, taken)),
                    protocol.headStates() ? headArray : null, buffers, protocol.replySize());
            connections.add(connection);
            connection.postReceives();
            chargeSetup(cpuStart);
            answered = true; // accept answers the client, or fails with the connection broken
            request.accept(endpoint, new ConnectData(connect.protocol()).encode());
        } catch (RuntimeException e) {
            LOG.warning(() -> "accepting " + request.peer() + " failed: " + e);
            if (!answered) {
                // no redo lane free, no endpoint: the client is told why instead of waiting out its timeout
                chargeSetup(cpuStart);
                try {
                    request.reject("server cannot take the connection: " + e.getMessage());
                } catch (RuntimeException gone) {
                    // the client went away meanwhile: nobody to tell
                }
            }
            if (connection != null) {
                connections.forget(connection);
                connection.close();
            } else if (buffers != null) {
                buffers.close();
            }
        }
    }

    private void chargeSetup(long cpuStart) {
        stats.serverCpuNanos.add(CPU.getCurrentThreadCpuTime() - cpuStart);
    }
}
