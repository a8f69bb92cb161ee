package io.erda.server;

import io.erda.cleaner.CleaningReport;
import io.erda.core.pm.WriteLatencyModel;
import io.erda.fabric.Fabric;
import io.erda.fabric.FabricCapabilities;
import io.erda.protocol.ConnectData;
import io.erda.protocol.HeadArray;
import io.erda.protocol.PutMode;
import io.erda.server.baseline.Baselines;
import io.erda.server.rdmp.Rdmp;
import io.erda.server.request.ErdaProtocolHandler;
import io.erda.server.request.Protocol;
import io.erda.server.request.Protocols;
import io.erda.server.request.Replication;
import io.erda.server.request.Request;
import io.erda.server.request.RequestPath;
import io.erda.server.platform.DaemonThreads;
import io.erda.server.store.CleanThreshold;
import io.erda.server.store.CleaningControl;
import io.erda.server.store.LeaseValidator;
import io.erda.server.store.LoopbackWordCas;
import io.erda.server.store.RegionRegistry;
import io.erda.server.store.Store;
import io.erda.server.store.StoreStats;
import java.net.URI;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * A running server, assembled: the store, its registrations on the fabric, the protocols it speaks and the threads
 * that serve them. What each part does is its own class's business; this one builds them, wires them and closes them.
 *
 * <p><b>Threads.</b> The {@link RequestPath}'s acceptor and {@code workers} request threads (on tcp the provider's
 * threads serve requests that find every worker parked), the lease validator (and its checker), the baselines'
 * redo-log applier and ring poller (paper §5.1: they apply asynchronously) and, once started, the log cleaner
 * ({@link CleaningControl}).
 *
 * <p><b>Protocols.</b> Erda's and the baselines' are registered in one {@link Protocols}, which the request path
 * consults per connection; only this class knows the baselines behind two of them.
 */
public final class RequestServer implements AutoCloseable {
    private final ServerConfig config;
    private final Store store;
    private final Fabric fabric;
    private final RegionRegistry registry;
    private final RequestPath requestPath;
    private final LeaseValidator validator;
    private final Baselines baselines;
    private final Rdmp rdmp;
    private final CleaningControl cleaning;
    private final StatsReport statsReport;
    private final DaemonThreads daemons;
    private final List<Thread> threads = new ArrayList<>();
    private volatile boolean running = true;
    /** One-sided mode on a {@code DEVICE}-atomic fabric: the server's own CAS path to its table, else null. */
    private LoopbackWordCas loopback;

    private RequestServer(ServerConfig config, StoreStats stats, Store store, Fabric fabric, Replication replication,
                          ServerHooks hooks) {
        this.config = config;
        this.store = store;
        this.fabric = fabric;
        boolean oneSided = config.put() == PutMode.ONE_SIDED;
        if (oneSided) {
            requireOneSidedPuts(fabric, replication);
            store.useOneSidedPuts(config.blockSize());
        }
        this.registry = new RegionRegistry(fabric, store.directory(), config.pmWriteLatencyNanos(),
                config.pmEmulation().configuration(config.persistence()), stats, oneSided);
        store.onChainGrowth(registry::chainGrew);
        Protocols protocols = new Protocols(); // filled below, before the request path starts
        this.requestPath = new RequestPath(fabric, config.listen(), config.workers(), protocols, registry::headArray,
                stats, hooks.requests(), hooks.handlers());
        this.validator = new LeaseValidator(store, stats);
        this.baselines = Baselines.open(config.directory(), new WriteLatencyModel(config.pmWriteLatencyNanos()), fabric,
                store, stats);
        this.rdmp = Rdmp.open(config.directory(), config.rdmp(), new WriteLatencyModel(config.pmWriteLatencyNanos()),
                fabric, config.lease().toNanos());
        this.daemons = new DaemonThreads(hooks.threads());
        this.cleaning = new CleaningControl(store, registry, stats, requestPath::notifyHeadState, daemons);
        this.statsReport = new StatsReport(store, stats, registry, fabric, baselines, rdmp, cleaning);
        // the admin CLEAN lives in the Erda handler; the baselines delegate only HELLO's description and STATS to it
        ErdaProtocolHandler erda = new ErdaProtocolHandler(store, registry, config.persistence(),
                Request.MAX_MESSAGE_LENGTH, statsReport::text, cleaning::clean, replication);
        protocols.add(ConnectData.PROTOCOL_ERDA, Protocol.inDram(fabric, true, (connection, buffers) -> erda))
                .add(ConnectData.PROTOCOL_REDO_LOG, baselines.redoLog(erda))
                .add(ConnectData.PROTOCOL_READ_AFTER_WRITE, baselines.readAfterWrite(erda))
                .add(ConnectData.PROTOCOL_HERD, rdmp.herd(erda))
                .add(ConnectData.PROTOCOL_RDMP_SA, rdmp.serverAssisted(erda))
                .add(ConnectData.PROTOCOL_RDMP_CC, rdmp.clientCentric(erda));
    }

    /**
     * One-sided mode's conditions on the fabric: a client's remote CAS must be atomic against the server's own word
     * updates. Where the device's atomics are atomic only among themselves ({@code DEVICE}: rxe), the server's word
     * updates go through a loopback connection of its own ({@link #installLoopbackWordCas}); without remote atomics
     * the mode cannot run. A clustered primary's backup has no one-sided update path yet.
     */
    private static void requireOneSidedPuts(Fabric fabric, Replication replication) {
        if (fabric.capabilities().atomicity() == FabricCapabilities.Atomicity.NONE) {
            throw new IllegalArgumentException("--put one-sided needs remote atomics, and this fabric's device has"
                    + " none (atomicity NONE): start with --put reserve");
        }
        if (replication != Replication.NONE) {
            throw new IllegalArgumentException("--put one-sided is not supported in a cluster yet: a backup has no"
                    + " one-sided update path; start the members with --put reserve");
        }
    }

    /**
     * Where atomicity is {@code DEVICE}, makes the table's word changes go through the server's own RNIC, so that they
     * are atomic with clients' CASes (docs/one-sided-put.md, "The device's atomic domain").
     */
    private void installLoopbackWordCas() {
        if (config.put() != PutMode.ONE_SIDED
                || fabric.capabilities().atomicity() != FabricCapabilities.Atomicity.DEVICE) {
            return;
        }
        URI listen = config.listen();
        URI anyPort = URI.create(listen.getScheme() + "://" + listen.getHost() + ":0");
        try {
            loopback = LoopbackWordCas.open(fabric, store.directory().table().region(), anyPort);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted while connecting the loopback for word updates", e);
        }
        store.directory().table().useWordCas(loopback);
    }

    /** Opens (or creates) the store, recovers it, registers it and starts serving. */
    public static RequestServer start(ServerConfig config) {
        return start(config, Replication.NONE);
    }

    /** As {@link #start(ServerConfig)}, for a clustered server: {@code replication} decides each PUT ([cluster]). */
    public static RequestServer start(ServerConfig config, Replication replication) {
        return start(config, replication, ServerHooks.NONE);
    }

    /** As {@link #start(ServerConfig)}, with what an embedding application puts into the server ({@code hooks}). */
    public static RequestServer start(ServerConfig config, ServerHooks hooks) {
        return start(config, Replication.NONE, hooks);
    }

    /** As {@link #start(ServerConfig, Replication)}, with {@code hooks}. */
    public static RequestServer start(ServerConfig config, Replication replication, ServerHooks hooks) {
        StoreStats stats = new StoreStats();
        Store store = config.openStore(stats);
        Fabric fabric = null;
        try {
            fabric = Fabric.open(config.listen(), config.fabricProperties());
            RequestServer server = new RequestServer(config, stats, store, fabric, replication, hooks);
            server.installLoopbackWordCas();
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
        threads.addAll(requestPath.start(daemons));
        threads.add(daemons.start("erda-lease-validator", validator::run));
        threads.addAll(baselines.start(daemons));
    }

    /**
     * Starts the log cleaner (paper §4.4) as the config says ({@link ServerConfig#cleanThreshold()},
     * {@link ServerConfig#regionPool()}): rolls forward a cleaning run a crash interrupted, then cleans every head its
     * threshold says is due (with {@link CleanThreshold#OFF}: only the roll-forward, and admin runs).
     */
    public void startCleaning() {
        cleaning.start(config.cleanThreshold(), config.regionPool());
    }

    /** {@link #startCleaning()} with a fixed threshold of {@code thresholdBytes} (0: only the roll-forward). */
    public void startCleaning(long thresholdBytes) {
        cleaning.start(CleanThreshold.of(thresholdBytes), null);
    }

    /**
     * {@link #startCleaning()} with {@code threshold}, keeping at most {@code poolRegions} retired regions zeroed for
     * reuse (0: delete every one; null: {@link CleanThreshold#defaultPool}).
     */
    public void startCleaning(CleanThreshold threshold, Integer poolRegions) {
        cleaning.start(threshold, poolRegions);
    }

    /** Cleans one head now and returns what the run did (the admin request; the cleaner must be started). */
    public CleaningReport clean(int head) throws InterruptedException {
        return cleaning.clean(head);
    }

    /** The URI clients connect to (a port of 0 resolved). */
    public URI uri() {
        return requestPath.uri();
    }

    public Store store() {
        return store;
    }

    /** The head array clients are given now: every registered region of every head. */
    public HeadArray headArray() {
        return registry.headArray();
    }

    /** The STATS text: "name=value" lines. */
    public String stats() {
        return statsReport.text();
    }

    @Override
    public void close() {
        if (!running) {
            return;
        }
        running = false;
        requestPath.stop();
        cleaning.close();
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
        requestPath.close();
        if (loopback != null) {
            loopback.close(); // every thread that changes words has stopped above
        }
        registry.close();
        baselines.close();
        rdmp.close();
        fabric.close();
        store.close();
    }
}
