package io.erda.server;

import io.erda.core.pm.WriteLatencyModel;
import io.erda.fabric.Completion;
import io.erda.fabric.CompletionQueue;
import io.erda.fabric.ConnectionRequest;
import io.erda.fabric.Endpoint;
import io.erda.fabric.EndpointOptions;
import io.erda.fabric.Fabric;
import io.erda.fabric.Listener;
import io.erda.protocol.ConnectData;
import io.erda.protocol.MessageHeader;
import io.erda.protocol.MessageType;
import io.erda.protocol.PersistenceMethod;
import io.erda.protocol.PutRequest;
import io.erda.protocol.WireFormatException;
import io.erda.protocol.memory.ObjectLayout;
import io.erda.server.baseline.Baselines;
import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.net.URI;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.LockSupport;
import java.util.function.BooleanSupplier;
import java.util.function.Function;
import java.util.function.UnaryOperator;
import java.util.logging.Level;
import java.util.logging.Logger;

/**
 * A running server: the store, its registrations on the fabric, the listener and its threads.
 *
 * <p><b>Threads.</b> One acceptor (waits on the listener), {@code workers} request threads, the lease validator (and its
 * checker), and the baselines' redo-log applier and ring poller (paper §5.1: they apply asynchronously).
 * Every connection shares one receive and one send completion queue; workers wait on the receive queue with
 * {@link CompletionQueue#take} (spins briefly, then parks), so an idle server burns no CPU, and drain the send
 * queue to free reply buffers. Where the provider offers it (tcp), a request that arrives while every worker is
 * parked is served by the provider's thread that received it instead ({@link #serveDirectly}). Server CPU time is
 * each thread's CPU time measured around the work it does (a request, an accept, a lease settlement), never around
 * waiting, so with shm a GET-only workload adds nothing.
 */
public final class RequestServer implements AutoCloseable {
    /** Receive buffers per connection: how many requests a client may have outstanding. */
    static final int RECEIVE_SLOTS = 8;
    /** Largest request: a header and a PUT of the longest key, rounded up to a cache line. */
    static final int MAX_MESSAGE_LENGTH = (MessageHeader.LENGTH + PutRequest.KEY_OFFSET + ObjectLayout.MAX_KEY_LENGTH
            + 63) & -64;
    /** Entries of each of the two shared completion queues, unless the device allows fewer (max_cqe). */
    private static final int QUEUE_CAPACITY = 1 << 16;
    private static final long IDLE_WAIT_MILLIS = 500;
    private static final Logger LOG = Logger.getLogger(RequestServer.class.getName());
    private static final ThreadMXBean CPU = ManagementFactory.getThreadMXBean();
    /** Requests a worker measures exactly before it samples (so a test's single PUT is charged as it costs). */
    static final long CPU_EXACT_REQUESTS = 1024;
    /** After those, one request in this many is measured and charged this many times (see {@link #workLoop}). */
    static final int CPU_SAMPLE = 8;

    private final ServerConfig config;
    private final StoreStats stats;
    private final Store store;
    private final Fabric fabric;
    private final RegionRegistry registry;
    private final Listener listener;
    private final CompletionQueue recvQueue;
    private final CompletionQueue sendQueue;
    private final Map<Endpoint, Connection> connections = new ConcurrentHashMap<>();
    /** Entries of each shared completion queue: QUEUE_CAPACITY, or the device's max_cqe when smaller. */
    private final int queueEntries;
    /** Completion-queue entries the connections' queue depths reserve, so the shared CQs can never overrun. */
    private final Map<Endpoint, int[]> reserved = new ConcurrentHashMap<>();
    private int sendEntriesReserved; // guarded by reserved
    private int recvEntriesReserved; // guarded by reserved
    private final RequestDispatcher dispatcher;
    private final StatsReport statsReport;
    private final LeaseValidator validator;
    private final Baselines baselines;
    private final List<Thread> threads = new ArrayList<>();
    private volatile boolean running = true;
    /** Requests being served by the provider's threads ({@link #serveDirectly}); close() waits for them. */
    private final AtomicInteger directRuns = new AtomicInteger();
    /** Requests served so far by provider threads, for their CPU sampling ({@link #cpuWeight}). */
    private final AtomicLong directServed = new AtomicLong();
    /** Each provider thread's CPU charge for the requests it serves. */
    private final ThreadLocal<RequestCpu> directCpu;
    private volatile StoreCleaning cleaning;
    private final Replication replication;
    /** What tests wrap (identities otherwise). */
    private final Seams seams;

    /**
     * What a test wraps in a server: each connection request the listener hands over, each connection's protocol
     * handler. Both are identities in a server users run.
     */
    record Seams(UnaryOperator<ConnectionRequest> requests, UnaryOperator<ProtocolHandler> handlers) {
        static final Seams NONE = new Seams(UnaryOperator.identity(), UnaryOperator.identity());

        static Seams requests(UnaryOperator<ConnectionRequest> requests) {
            return new Seams(requests, UnaryOperator.identity());
        }

        static Seams handlers(UnaryOperator<ProtocolHandler> handlers) {
            return new Seams(UnaryOperator.identity(), handlers);
        }
    }

    private RequestServer(ServerConfig config, StoreStats stats, Store store, Fabric fabric, Replication replication,
                          Seams seams) {
        this.config = config;
        this.replication = replication;
        this.seams = seams;
        this.stats = stats;
        this.directCpu = ThreadLocal.withInitial(() -> new RequestCpu(stats.serverCpuNanos));
        this.store = store;
        this.fabric = fabric;
        this.registry = new RegionRegistry(fabric, store.directory(), config.pmWriteLatencyNanos(),
                config.persistence() == PersistenceMethod.READ_AFTER_WRITE, stats);
        store.onChainGrowth(registry::chainGrew);
        // every queue is sized within the device's limits (rxe: max_cqe 32767), read when the fabric opened
        this.queueEntries = Math.min(QUEUE_CAPACITY, fabric.capabilities().maxCompletionQueueEntries());
        this.recvQueue = fabric.createCompletionQueue(queueEntries);
        this.sendQueue = fabric.createCompletionQueue(queueEntries);
        this.listener = fabric.listen(config.listen());
        this.dispatcher = new RequestDispatcher(stats, this::drainUntil);
        this.validator = new LeaseValidator(store.leases(), stats);
        WriteLatencyModel latency = new WriteLatencyModel(config.pmWriteLatencyNanos());
        this.baselines = Baselines.open(config.directory(), latency, fabric, store, stats);
        this.statsReport = new StatsReport(store, stats, registry, fabric, baselines, () -> {
            StoreCleaning c = cleaning;
            return c == null ? CleanThreshold.OFF : c.threshold();
        }, this::cleanThresholdOf);
    }

    /** Opens (or creates) the store, recovers it, registers it and starts serving. */
    public static RequestServer start(ServerConfig config) {
        return start(config, Replication.NONE);
    }

    /** As {@link #start(ServerConfig)}, for a clustered server: {@code replication} decides each PUT ([cluster]). */
    public static RequestServer start(ServerConfig config, Replication replication) {
        return start(config, replication, Seams.NONE);
    }

    /** As {@link #start(ServerConfig)}, with what {@code seams} wraps (tests). */
    static RequestServer start(ServerConfig config, Seams seams) {
        return start(config, Replication.NONE, seams);
    }

    private static RequestServer start(ServerConfig config, Replication replication, Seams seams) {
        StoreStats stats = new StoreStats();
        Store store = Store.open(config, stats);
        Fabric fabric = null;
        try {
            fabric = Fabric.open(config.listen(), config.fabricProperties());
            RequestServer server = new RequestServer(config, stats, store, fabric, replication, seams);
            server.startThreads();
            return server;
        } catch (RuntimeException e) {
            if (fabric != null) {
                fabric.close();
            }
            store.close();
            throw e;
        }
    }

    private void startThreads() {
        recvQueue.consumeWhenIdle(this::serveDirectly);
        threads.add(Thread.ofPlatform().name("erda-acceptor").daemon().start(this::acceptLoop));
        for (int i = 0; i < config.workers(); i++) {
            threads.add(Thread.ofPlatform().name("erda-worker-" + i).daemon().start(this::workLoop));
        }
        threads.add(Thread.ofPlatform().name("erda-lease-validator").daemon().start(validator::run));
        threads.addAll(baselines.start());
    }

    /**
     * Starts the log cleaner (paper §4.4) as the config says ({@link ServerConfig#cleanThreshold()},
     * {@link ServerConfig#regionPool()}): rolls forward a cleaning run a crash interrupted, then cleans every head its
     * threshold says is due (with {@link CleanThreshold#OFF}: only the roll-forward, and admin runs).
     */
    public synchronized void startCleaning() {
        startCleaning(config.cleanThreshold(), config.regionPool());
    }

    /** {@link #startCleaning()} with a fixed threshold of {@code thresholdBytes} (0: only the roll-forward). */
    public synchronized void startCleaning(long thresholdBytes) {
        startCleaning(CleanThreshold.of(thresholdBytes), null);
    }

    /**
     * {@link #startCleaning()} with {@code threshold}, keeping at most {@code poolRegions} retired regions zeroed for
     * reuse (0: delete every one; null: {@link CleanThreshold#defaultPool}).
     */
    public synchronized void startCleaning(CleanThreshold threshold, Integer poolRegions) {
        if (cleaning == null) {
            io.erda.core.PmDirectory pm = store.directory();
            long regionSize = pm.geometry().log().regionSize();
            pm.regionPool().capacity(poolRegions != null ? poolRegions
                    : threshold.defaultPool(pm.heads().size(), regionSize));
            cleaning = new StoreCleaning(store, registry, stats, threshold, this::notifyHeadState);
            cleaning.start();
        }
    }

    /** The bytes above which head {@code head}'s chain is cleaned now; {@link Long#MAX_VALUE}: not cleaned. */
    long cleanThresholdOf(int head) {
        StoreCleaning c = cleaning;
        return c == null ? Long.MAX_VALUE : c.thresholdOf(head);
    }

    /** Cleans one head now and returns what the run did (the admin request; the cleaner must be started). */
    public io.erda.cleaner.CleaningReport clean(int head) throws InterruptedException {
        StoreCleaning c = cleaning;
        if (c == null) {
            throw new IllegalStateException("the log cleaner is not started");
        }
        return c.clean(head);
    }

    /** A cleaning report as the CLEAN reply carries it: "name=value" lines. */
    static String report(io.erda.cleaner.CleaningReport r) {
        return "head=" + r.headId() + "\ngeneration_before=" + r.generationBefore() + "\ngeneration_after="
                + r.generationAfter() + "\noccupied_bytes_before=" + r.occupiedBefore() + "\noccupied_bytes_after="
                + r.occupiedAfter() + "\nlive_bytes_copied=" + r.liveBytesCopied() + "\nobjects_copied=" + r.objectsCopied()
                + "\nstale_skipped=" + r.staleSkipped() + "\nentries_removed=" + r.entriesRemoved() + "\nmerge_ms="
                + millis(r.merge()) + "\nreplicate_ms=" + millis(r.replicate()) + "\nswitch_ms=" + millis(r.switchOver())
                + "\nretire_ms=" + millis(r.retire()) + "\ntwo_sided_ms=" + millis(r.twoSided()) + "\ntotal_ms="
                + millis(r.total()) + "\ncopy_mb_per_s=" + String.format(java.util.Locale.ROOT, "%.1f",
                r.copyMegabytesPerSecond()) + "\n";
    }

    private static String millis(java.time.Duration d) {
        return String.format(java.util.Locale.ROOT, "%.3f", d.toNanos() / 1e6);
    }

    /** The URI clients connect to (a port of 0 resolved). */
    public URI uri() {
        return listener.uri();
    }

    public Store store() {
        return store;
    }

    /** The registrations of the store's PM, for tests in this package. */
    RegionRegistry registry() {
        return registry;
    }

    /** The fabric the server listens on, for tests in this package. */
    Fabric fabric() {
        return fabric;
    }

    /** The head array clients are given: every registered region of every head. */
    io.erda.protocol.HeadArray headArray() {
        return registry.headArray();
    }

    /** The STATS text: "name=value" lines. */
    public String stats() {
        return statsReport.text();
    }

    // ------------------------------------------------------------------ connections

    private void acceptLoop() {
        while (running) {
            ConnectionRequest request;
            try {
                request = listener.accept(IDLE_WAIT_MILLIS, TimeUnit.MILLISECONDS);
            } catch (InterruptedException e) {
                continue; // close() clears running first; an interrupt alone is not a stop (see workLoop)
            } catch (RuntimeException e) {
                if (running) {
                    LOG.warning("accept failed: " + e);
                }
                continue;
            }
            if (request != null) {
                accept(seams.requests().apply(request), CPU.getCurrentThreadCpuTime());
            }
        }
    }

    /**
     * Sets up a connection, or refuses it. Its CPU since {@code cpuStart} is charged just before the client is
     * answered, not after: once answered, the client may say HELLO and a benchmark open a window of the server's
     * counters (ycsb-compare opens it when its client says it is connected), and a charge that landed in that window
     * made the YCSB-C run of a main job show server CPU for GETs (8 µs over 8 M GETs). What the acceptor does after
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
        Connection connection = null;
        ReceiveBuffers buffers = null;
        boolean answered = false;
        try {
            boolean redo = connect.protocol() == ConnectData.PROTOCOL_REDO_LOG;
            buffers = redo ? baselines.takeRedoLane() : ReceiveBuffers.dram(fabric, RECEIVE_SLOTS, MAX_MESSAGE_LENGTH);
            int sendDepth = 2 * buffers.count() + 64;
            String full = reserve(sendDepth, buffers.count());
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
                release(sendDepth, buffers.count());
                throw e;
            }
            reserved.put(endpoint, new int[] {sendDepth, buffers.count()});
            // HEAD_STATE (paper §4.4) goes to Erda connections only: baseline clients GET two-sided, never read the
            // head array, and keep no receive posted for an unsolicited message
            connection = new Connection(fabric, endpoint, handlerFor(connect.protocol(), buffers),
                    connect.protocol() == ConnectData.PROTOCOL_ERDA ? registry::headArray : null, buffers,
                    redo ? Baselines.REDO_REPLY_SIZE : MAX_MESSAGE_LENGTH);
            connections.put(endpoint, connection);
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
                forget(connection);
                connection.close();
            } else if (buffers != null) {
                buffers.close();
            }
        }
    }

    private void chargeSetup(long cpuStart) {
        stats.serverCpuNanos.add(CPU.getCurrentThreadCpuTime() - cpuStart);
    }

    private Function<Connection, ProtocolHandler> handlerFor(int protocol, ReceiveBuffers buffers) {
        // the admin CLEAN lives in the Erda handler; the baselines delegate only HELLO's description and STATS to it
        ErdaProtocolHandler erda = new ErdaProtocolHandler(store, registry, config.persistence(), MAX_MESSAGE_LENGTH,
                this::stats, head -> report(clean(head)), replication);
        Function<Connection, ProtocolHandler> handler = switch (protocol) {
            case ConnectData.PROTOCOL_ERDA -> connection -> erda;
            case ConnectData.PROTOCOL_REDO_LOG, ConnectData.PROTOCOL_READ_AFTER_WRITE ->
                    connection -> baselines.handler(protocol, erda, buffers, connection, MAX_MESSAGE_LENGTH);
            default -> throw new IllegalArgumentException("protocol " + protocol + " is unknown");
        };
        return handler.andThen(seams.handlers());
    }

    /** The baselines' PM logs (tests pause their applier and poller). */
    Baselines baselines() {
        return baselines;
    }

    /**
     * Reserves a connection's queue depths in the shared completion queues; null when they fit, else why not (the
     * reason the connection is rejected with).
     */
    private String reserve(int send, int recv) {
        synchronized (reserved) {
            if (sendEntriesReserved + send > queueEntries || recvEntriesReserved + recv > queueEntries) {
                return "server full: " + connections.size() + " connections use " + sendEntriesReserved + " of the "
                        + queueEntries + " send and " + recvEntriesReserved + " receive completion-queue entries ("
                        + fabric.capabilities().device() + " allows " + fabric.capabilities().maxCompletionQueueEntries()
                        + " per queue)";
            }
            sendEntriesReserved += send;
            recvEntriesReserved += recv;
            return null;
        }
    }

    private void release(int send, int recv) {
        synchronized (reserved) {
            sendEntriesReserved -= send;
            recvEntriesReserved -= recv;
        }
    }

    /** Drops a connection from the table and returns its completion-queue entries; true if it was there. */
    private boolean forget(Connection connection) {
        boolean present = connections.remove(connection.endpoint()) != null;
        int[] depths = reserved.remove(connection.endpoint());
        if (depths != null) {
            release(depths[0], depths[1]);
        }
        return present;
    }

    private void closeConnection(Connection connection, String why) {
        closeConnection(connection, why, false);
    }

    /** A failed completion closes its connection: a line at WARNING, unless the client simply closed its side. */
    private void closeConnection(Connection connection, Completion failed) {
        closeConnection(connection, failed.toString(), failed.peerClosed());
    }

    private void closeConnection(Connection connection, String why, boolean orderly) {
        if (forget(connection)) {
            // a broken connection is worth a line (with the provider's cause of a flush); a client leaving is not
            LOG.log(orderly ? Level.FINE : Level.WARNING,
                    () -> "closing " + connection + ": " + why);
            connection.close();
        }
    }

    // ------------------------------------------------------------------ requests

    /**
     * Serves receive completions. server_cpu_ns charges a request the worker's CPU time (user and system) from its
     * completion to its reply, just before the reply is posted ({@link RequestCpu}, which carries what follows the
     * reply to the next one). The CPU clock is a system call (0.45-0.75 us on these machines, against a 7-10 us PUT
     * on shm, and a measured request reads it twice on its path, at the start and at the reply), so each worker
     * measures its first {@link #CPU_EXACT_REQUESTS} requests, then one request in {@link #CPU_SAMPLE} drawn at random
     * (a fixed stride would meet a protocol's own period: Read After Write's two requests per PUT) and charges it that
     * many times.
     */
    private void workLoop() {
        RequestCpu cpu = new RequestCpu(stats.serverCpuNanos);
        long served = 0;
        while (running) {
            Completion c;
            try {
                c = recvQueue.take(IDLE_WAIT_MILLIS, TimeUnit.MILLISECONDS);
            } catch (InterruptedException e) {
                // close() clears running before it interrupts. An interrupt alone is not a stop: the JVM leaves a
                // thread interrupted now and then when another thread closes a shared arena while this one reads a
                // segment of it (JDK 25: 10 of 200 such races), e.g. a retired region's records read for pruning
                // while the cleaner deletes the region. Returning here lost the worker and every request it served.
                continue;
            }
            if (c == null) {
                drainSends();
                continue;
            }
            serve(c, cpu, cpuWeight(served++, ThreadLocalRandom.current()));
        }
    }

    /**
     * Serves one receive completion and frees the reply buffers sent meanwhile, its CPU measured {@code weight} times.
     * An unmeasured request (weight 0) is served with no {@link RequestCpu} at all, so the path of seven PUTs in eight
     * has no call more than before the charge moved to the reply (store-bench --latency-check, Erda update-only PUT
     * p50 against the code before that move, alternating: 0.24 to 0.34 µs higher in three pairs with a call at every
     * reply; from 0.30 higher to 0.18 lower, 0.04 higher on average, in four pairs without).
     */
    private void serve(Completion c, RequestCpu cpu, long weight) {
        if (weight == 0) {
            received(c, null);
            drainSends();
            return;
        }
        cpu.begin(weight);
        MessageType served = received(c, cpu);
        drainSends();
        cpu.end(served);
    }

    /**
     * The receive queue's idle consumer ({@link CompletionQueue#consumeWhenIdle}; the tcp provider): a request that
     * arrives while every worker is parked is served on the provider's thread that received it, as a worker would
     * serve it, instead of paying a worker's wake-up. It stands in for a parked worker, so no more requests are in
     * service at once than there are workers; it never waits for a later request of its connection (replies wait
     * only for send completions, which another provider thread delivers).
     */
    private boolean serveDirectly(Completion c) {
        directRuns.incrementAndGet(); // before reading running: close() waits for every run that saw it set
        try {
            if (!running) {
                return false;
            }
            long weight = cpuWeight(directServed.getAndIncrement(), ThreadLocalRandom.current());
            serve(c, weight == 0 ? null : directCpu.get(), weight); // no thread-local lookup for an unmeasured one
            stats.requestsServedDirectly.increment();
        } catch (RuntimeException e) {
            LOG.log(Level.WARNING, "serving " + c + " failed", e); // the provider's thread goes on
        } finally {
            // an interrupt left by the request's work is not for the provider's thread: the JVM's stray one (see
            // workLoop) would make its next socket read close the connection; close() of the endpoint, the only
            // one meant for it, closes the sockets too
            Thread.interrupted();
            directRuns.decrementAndGet();
        }
        return true;
    }

    /** How many times request number {@code served} of a worker is charged: 1 (exact), CPU_SAMPLE or 0 (not measured). */
    static long cpuWeight(long served, java.util.random.RandomGenerator random) {
        return served < CPU_EXACT_REQUESTS ? 1 : random.nextInt(CPU_SAMPLE) == 0 ? CPU_SAMPLE : 0;
    }

    /**
     * Handles one receive completion; returns the type of the request served, or null if none was. Reading the
     * counters (STATS) is not serving: its CPU stays out of server_cpu_ns ({@link RequestCpu}), or a benchmark that
     * reads STATS around a run charges the reads to the run's operations (on rxe under emulation the two reads around
     * a YCSB C run came to 2.4 µs per one-sided GET).
     */
    private MessageType received(Completion c, RequestCpu cpu) { // cpu: null if the request is not measured
        Connection connection = connections.get(c.endpoint());
        if (connection == null) {
            return null; // a closed connection's flushed receives
        }
        if (!c.isSuccess()) {
            closeConnection(connection, c);
            return null;
        }
        try {
            MessageType served = dispatcher.dispatch(connection, (int) c.wrId(), c.byteLength(), cpu);
            if (served == null) {
                forget(connection);
                connection.endpoint().abort();
                connection.close();
            }
            return served;
        } catch (RuntimeException e) {
            closeConnection(connection, e.toString()); // endpoint failed or closed under us
            return null;
        }
    }

    private void drainSends() {
        Completion c;
        while ((c = sendQueue.poll()) != null) {
            sendCompleted(c);
        }
    }

    private void sendCompleted(Completion c) {
        Connection connection = connections.get(c.endpoint());
        if (connection != null && !connection.sendCompleted(c)) {
            closeConnection(connection, c);
        }
    }

    /** Waits for send completions until {@code done} or the connection is gone. */
    private void drainUntil(Connection connection, BooleanSupplier done) {
        while (!done.getAsBoolean() && connections.get(connection.endpoint()) == connection && running) {
            try {
                Completion c = sendQueue.take(IDLE_WAIT_MILLIS, TimeUnit.MILLISECONDS);
                if (c != null) {
                    sendCompleted(c);
                }
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return;
            }
        }
    }

    /**
     * Paper §4.4: every connection of the Erda protocol is told the new head array (HEAD_STATE). Returns whether
     * every one of them has acknowledged it (or is gone).
     */
    private java.util.function.BooleanSupplier notifyHeadState() {
        Map<Connection, Integer> due = new java.util.HashMap<>();
        for (Connection c : connections.values()) {
            try {
                due.put(c, c.notifyHeadState());
            } catch (RuntimeException e) {
                closeConnection(c, "HEAD_STATE failed: " + e); // endpoint failed under us
            }
        }
        return () -> due.entrySet().stream().allMatch(e -> e.getKey().acknowledged(e.getValue()));
    }

    /** Connections currently open. */
    int connectionCount() {
        return connections.size();
    }

    @Override
    public void close() {
        if (!running) {
            return;
        }
        running = false;
        if (cleaning != null) {
            cleaning.close();
        }
        validator.stop();
        baselines.stop();
        threads.forEach(Thread::interrupt);
        for (Thread t : threads) {
            try {
                t.join(TimeUnit.SECONDS.toMillis(5));
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(5);
        while (directRuns.get() > 0 && System.nanoTime() - deadline < 0) {
            LockSupport.parkNanos(100_000); // a request in service on a provider thread
        }
        listener.close();
        connections.values().forEach(Connection::close);
        connections.clear();
        recvQueue.close();
        sendQueue.close();
        registry.close();
        baselines.close();
        fabric.close();
        store.close();
    }
}
