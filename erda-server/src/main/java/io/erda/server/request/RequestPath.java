package io.erda.server.request;

import io.erda.server.platform.DaemonThreads;
import io.erda.fabric.CompletionQueue;
import io.erda.fabric.ConnectionRequest;
import io.erda.fabric.Fabric;
import io.erda.fabric.Listener;
import io.erda.protocol.HeadArray;
import io.erda.server.store.StoreStats;
import java.net.URI;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;
import java.util.function.Supplier;
import java.util.function.UnaryOperator;

/**
 * The way of a request through a server: the listener and the {@link Acceptor} that turns connection requests into
 * {@link Connections}, the two completion queues every connection shares (their entries budgeted by
 * {@link CompletionBudget}), and the {@link Workers} that serve what arrives, each request through the handler of its
 * connection's {@link Protocol}.
 */
public final class RequestPath {
    /** Entries of each of the two shared completion queues, unless the device allows fewer (max_cqe). */
    private static final int QUEUE_CAPACITY = 1 << 16;

    private final Listener listener;
    private final CompletionQueue recvQueue;
    private final CompletionQueue sendQueue;
    private final Connections connections;
    private final Acceptor acceptor;
    private final Workers workers;

    /**
     * Listens on {@code listen} with {@code workers} request threads (none started yet) for the protocols
     * {@code protocols} holds by the time a client connects; HEAD_STATE carries {@code headArray}. The two operators
     * wrap each connection request and each connection's handler (tests; identities otherwise).
     */
    public RequestPath(Fabric fabric, URI listen, int workers, Protocols protocols, Supplier<HeadArray> headArray,
                       StoreStats stats, UnaryOperator<ConnectionRequest> requestSeam,
                       UnaryOperator<ProtocolHandler> handlerSeam) {
        // every queue is sized within the device's limits (rxe: max_cqe 32767), read when the fabric opened
        int queueEntries = Math.min(QUEUE_CAPACITY, fabric.capabilities().maxCompletionQueueEntries());
        this.recvQueue = fabric.createCompletionQueue(queueEntries);
        this.sendQueue = fabric.createCompletionQueue(queueEntries);
        this.listener = fabric.listen(listen);
        CompletionBudget budget = new CompletionBudget(queueEntries, fabric.capabilities());
        this.connections = new Connections(budget);
        this.workers = new Workers(workers, recvQueue, sendQueue, connections, stats);
        this.acceptor = new Acceptor(listener, fabric, sendQueue, recvQueue, budget, connections, protocols, headArray,
                stats, requestSeam, handlerSeam);
    }

    /** Starts the workers and the acceptor (daemon threads; {@link #stop}, then an interrupt, ends them). */
    public List<Thread> start(DaemonThreads daemons) {
        List<Thread> threads = new ArrayList<>(workers.start(daemons));
        threads.add(acceptor.start(daemons));
        return threads;
    }

    /** The URI clients connect to (a port of 0 resolved). */
    public URI uri() {
        return listener.uri();
    }

    /**
     * Paper §4.4: every connection of a protocol that takes HEAD_STATE is told the new head array. Returns whether
     * every one of them has acknowledged it (or is gone).
     */
    public BooleanSupplier notifyHeadState() {
        return connections.notifyHeadState();
    }

    /** Accepts and serves no more: each thread ends at its next wake-up, or when interrupted. */
    public void stop() {
        acceptor.stop();
        workers.stop();
    }

    /**
     * After {@link #stop} and the threads' end: waits (up to 5 s) for requests still in service on the provider's
     * threads, then closes the listener, every connection and the queues.
     */
    public void close() {
        workers.awaitDirectRuns(TimeUnit.SECONDS.toNanos(5));
        listener.close();
        connections.closeAll();
        recvQueue.close();
        sendQueue.close();
    }
}
