package io.erda.server.request;

import io.erda.server.platform.DaemonThreads;
import io.erda.fabric.Completion;
import io.erda.fabric.CompletionQueue;
import io.erda.protocol.MessageType;
import io.erda.server.store.StoreStats;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.LockSupport;
import java.util.function.BooleanSupplier;
import java.util.logging.Level;
import java.util.logging.Logger;

/**
 * The request threads: {@code count} workers that wait on the shared receive queue with {@link CompletionQueue#take}
 * (spins briefly, then parks), so an idle server burns no CPU, serve each request through the
 * {@link RequestDispatcher} and drain the shared send queue to free reply buffers. Where the provider offers it (tcp),
 * a request that arrives while every worker is parked is served by the provider's thread that received it instead
 * ({@link #serveDirectly}).
 *
 * <p>Server CPU time is each thread's CPU time measured around the work it does, never around waiting, so with shm a
 * GET-only workload adds nothing. server_cpu_ns charges a request the thread's CPU time (user and system) from its
 * completion to its reply, just before the reply is posted ({@link RequestCpu}, which carries what follows the reply to
 * the next one); after its first requests a thread measures a sample of them ({@link RequestCpu#weight}).
 */
final class Workers {
    private static final Logger LOG = Logger.getLogger(Workers.class.getName());
    private static final long IDLE_WAIT_MILLIS = 500;

    private final int count;
    private final CompletionQueue recvQueue;
    private final CompletionQueue sendQueue;
    private final Connections connections;
    private final StoreStats stats;
    private final RequestDispatcher dispatcher;
    private volatile boolean running = true;
    /** Requests being served by the provider's threads ({@link #serveDirectly}); {@link #awaitDirectRuns} waits. */
    private final AtomicInteger directRuns = new AtomicInteger();
    /** Requests served so far by provider threads, for their CPU sampling ({@link RequestCpu#weight}). */
    private final AtomicLong directServed = new AtomicLong();
    /** Each provider thread's CPU charge for the requests it serves. */
    private final ThreadLocal<RequestCpu> directCpu;

    Workers(int count, CompletionQueue recvQueue, CompletionQueue sendQueue, Connections connections, StoreStats stats) {
        this.count = count;
        this.recvQueue = recvQueue;
        this.sendQueue = sendQueue;
        this.connections = connections;
        this.stats = stats;
        this.dispatcher = new RequestDispatcher(stats, this::drainUntil);
        this.directCpu = ThreadLocal.withInitial(() -> new RequestCpu(stats.serverCpuNanos));
    }

    /** Starts the workers (daemon threads) and takes the requests the receive queue's provider offers while idle. */
    List<Thread> start(DaemonThreads threadsOf) {
        recvQueue.consumeWhenIdle(this::serveDirectly);
        List<Thread> threads = new ArrayList<>();
        for (int i = 0; i < count; i++) {
            threads.add(threadsOf.start("erda-worker-" + i, this::workLoop));
        }
        return threads;
    }

    /** Serves no more requests: the workers end at their next wake-up (or interrupt), provider threads at once. */
    void stop() {
        running = false;
    }

    /** Waits, up to {@code nanos}, for the requests provider threads are serving to end. */
    void awaitDirectRuns(long nanos) {
        long deadline = System.nanoTime() + nanos;
        while (directRuns.get() > 0 && System.nanoTime() - deadline < 0) {
            LockSupport.parkNanos(100_000); // a request in service on a provider thread
        }
    }

    /** Serves receive completions; each worker charges its requests' CPU as {@link RequestCpu#weight} says. */
    private void workLoop() {
        RequestCpu cpu = new RequestCpu(stats.serverCpuNanos);
        long served = 0;
        while (running) {
            Completion c;
            try {
                c = recvQueue.take(IDLE_WAIT_MILLIS, TimeUnit.MILLISECONDS);
            } catch (InterruptedException e) {
                // stop() comes before the interrupt. An interrupt alone is not a stop: the JVM leaves a
                // thread interrupted now and then when another thread closes a shared arena while this one reads a
                // segment of it (JDK 25: 10 of 200 such races), e.g. a retired region's records read for pruning
                // while the cleaner deletes the region. Returning here lost the worker and every request it served.
                continue;
            }
            if (c == null) {
                drainSends();
                continue;
            }
            serve(c, cpu, RequestCpu.weight(served++, ThreadLocalRandom.current()));
        }
    }

    /**
     * Serves one receive completion and frees the reply buffers sent meanwhile, its CPU measured {@code weight} times.
     * An unmeasured request (weight 0) is served with no {@link RequestCpu} at all, so the path of seven PUTs in eight
     * pays no call for the charge at the reply (a call at every reply cost a PUT a few tenths of a microsecond).
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
        directRuns.incrementAndGet(); // before reading running: awaitDirectRuns waits for every run that saw it set
        try {
            if (!running) {
                return false;
            }
            long weight = RequestCpu.weight(directServed.getAndIncrement(), ThreadLocalRandom.current());
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

    /**
     * Handles one receive completion; returns the type of the request served, or null if none was. Reading the
     * counters (STATS) is not serving: its CPU stays out of server_cpu_ns ({@link RequestCpu}), or a benchmark that
     * reads STATS around a run would charge the reads to the run's operations.
     */
    private MessageType received(Completion c, RequestCpu cpu) { // cpu: null if the request is not measured
        ServerConnection connection = connections.get(c.endpoint());
        if (connection == null) {
            return null; // a closed connection's flushed receives
        }
        if (!c.isSuccess()) {
            connections.close(connection, c);
            return null;
        }
        try {
            MessageType served = dispatcher.dispatch(connection, (int) c.wrId(), c.byteLength(), cpu);
            if (served == null) {
                connections.forget(connection);
                connection.endpoint().abort();
                connection.close();
            }
            return served;
        } catch (RuntimeException e) {
            connections.close(connection, e.toString()); // endpoint failed or closed under us
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
        ServerConnection connection = connections.get(c.endpoint());
        if (connection != null && !connection.sendCompleted(c)) {
            connections.close(connection, c);
        }
    }

    /** Waits for send completions until {@code done} or the connection is gone. */
    private void drainUntil(ServerConnection connection, BooleanSupplier done) {
        while (!done.getAsBoolean() && connections.isOpen(connection) && running) {
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
}
