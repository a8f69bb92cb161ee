package io.erda.fabric.verbs;

import io.erda.fabric.Completion;
import io.erda.fabric.FabricException;
import io.erda.ffm.rdmacm.CmEvent;
import io.erda.ffm.rdmacm.RdmaCma;
import io.erda.ffm.rdmacm.RdmaCmLibrary;
import io.erda.ffm.verbs.Verbs;
import io.erda.ffm.verbs.VerbsException;
import java.io.Closeable;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.net.InetSocketAddress;
import java.net.URI;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;

/**
 * One rdma_cm id carrying one endpoint's connection. The endpoint's QP is its own (made with the fabric's PD when
 * the endpoint was created, so receives can be posted before connecting); its number travels in the connect/accept
 * parameters and it is moved INIT → RTR → RTS with the attributes rdma_cm resolved (rdma_init_qp_attr), except the
 * RNR attributes, which are the endpoint's ({@link RnrSetting}: our rnr_retry, the peer's timer code from
 * {@link CmPrivateData}).
 *
 * <p>Set-up events are queued for the thread connecting or accepting; once connected, DISCONNECTED,
 * DEVICE_REMOVAL or TIMEWAIT_EXIT break the endpoint (QP to ERR: everything flushes) and the id is destroyed.
 * {@link #close()} (the endpoint breaking on its own) is rdma_disconnect, which gives both sides DISCONNECTED.
 */
final class CmConnection implements Closeable {
    private static final int RESOLVE_TIMEOUT_MILLIS = 2_000;
    private static final long SET_UP_TIMEOUT_SECONDS = 30;

    private final CmEventChannel events;
    private final RdmaCmLibrary cm;
    private final MemorySegment id;
    private final LinkedBlockingQueue<CmEvent> setUp = new LinkedBlockingQueue<>();
    private VerbsEndpoint endpoint; // guarded by this
    private boolean ended;          // guarded by this
    private boolean disconnected;   // guarded by this
    private boolean destroyed;      // guarded by this

    /** Wakes a thread waiting for a set-up event when the fabric's channel closes (not an rdma_cm event type). */
    private static final CmEvent CHANNEL_CLOSED = new CmEvent(MemorySegment.NULL, -1, MemorySegment.NULL,
            MemorySegment.NULL, 0, 0, new byte[0]);

    /** An active-side connection: a new id on the fabric's channel. */
    CmConnection(CmEventChannel events) {
        this.events = events;
        this.cm = events.library();
        this.id = events.createId(this::onEvent, this::channelClosing);
    }

    /** A passive-side connection on the id a CONNECT_REQUEST brought (called on the event thread). */
    CmConnection(CmEventChannel events, MemorySegment requestId) {
        this.events = events;
        this.cm = events.library();
        this.id = requestId;
        events.route(requestId, this::onEvent, this::channelClosing);
    }

    /** The fabric closes its channel: destroy the id now (not while one of our calls uses it) and wake a waiter. */
    private void channelClosing() {
        destroy();
        setUp.add(CHANNEL_CLOSED);
    }

    /**
     * Runs a librdmacm call on the id under this connection's lock, so that the id cannot be destroyed (by
     * {@link #channelClosing} on another thread) while the call uses it; a destroyed id is a FabricException.
     */
    private synchronized void onId(String what, java.util.function.Consumer<MemorySegment> call) {
        if (destroyed) {
            throw new FabricException(what + ": the rdma_cm id was destroyed (the fabric is closing)");
        }
        call.accept(id);
    }

    MemorySegment id() {
        return id;
    }

    private static boolean ends(int type) {
        return type == RdmaCma.RDMA_CM_EVENT_DISCONNECTED || type == RdmaCma.RDMA_CM_EVENT_DEVICE_REMOVAL
                || type == RdmaCma.RDMA_CM_EVENT_TIMEWAIT_EXIT;
    }

    private void onEvent(CmEvent event) {
        if (!ends(event.type())) {
            setUp.add(event);
            return;
        }
        VerbsEndpoint broken;
        synchronized (this) {
            ended = true;
            broken = endpoint;
        }
        if (broken == null) {
            setUp.add(event); // still setting up: that thread fails and destroys the id
            return;
        }
        String name = CmEventChannel.name(event.type());
        broken.enterError(event.type() == RdmaCma.RDMA_CM_EVENT_DISCONNECTED
                ? Completion.PEER_CLOSED + " (rdma_cm reported " + name + ")" : "rdma_cm reported " + name);
        destroy();
    }

    // ------------------------------------------------------------------ active side

    /** Resolves, connects and brings the QP up; returns the peer's accept payload. Destroys the id on failure. */
    byte[] connect(VerbsFabric fabric, VerbsEndpoint endpoint, URI uri, byte[] privateData) {
        try {
            InetSocketAddress to = new InetSocketAddress(uri.getHost(), uri.getPort());
            onId("rdma_resolve_addr", id -> cm.resolveAddr(id, to, RESOLVE_TIMEOUT_MILLIS));
            await(RdmaCma.RDMA_CM_EVENT_ADDR_RESOLVED, uri);
            onId("rdma_resolve_route", id -> cm.resolveRoute(id, RESOLVE_TIMEOUT_MILLIS));
            await(RdmaCma.RDMA_CM_EVENT_ROUTE_RESOLVED, uri);
            onId("route check", id -> fabric.checkSameDevice(RdmaCmLibrary.verbsOf(id), "route to " + uri));
            toInit(fabric, endpoint);
            RnrSetting rnr = endpoint.rnr();
            onId("rdma_connect", id -> {
                try (Arena arena = Arena.ofConfined()) {
                    cm.connect(id, RdmaCmLibrary.connectionParameters(arena,
                            new CmPrivateData(rnr.timerCode(), privateData).encode(), endpoint.qpNum(), rnr.retry()));
                }
            });
            CmPrivateData reply = CmPrivateData.decode(await(RdmaCma.RDMA_CM_EVENT_CONNECT_RESPONSE, uri).privateData());
            toRts(endpoint, reply.rnrTimerCode());
            onId("rdma_establish", cm::establish);
            return reply.payload();
        } catch (VerbsException | FabricException e) {
            destroy();
            throw e instanceof FabricException f ? f : new FabricException("connecting to " + uri + " through rdma_cm failed: "
                    + e.getMessage(), e);
        }
    }

    // ------------------------------------------------------------------ passive side

    /**
     * Brings the QP up towards the requester, runs {@code accepted} (the endpoint is open for posting: once
     * rdma_accept has sent the REP the peer may send), accepts, and waits for ESTABLISHED. Destroys the id on
     * failure.
     */
    void accept(VerbsFabric fabric, VerbsEndpoint endpoint, CmPrivateData request, URI peer, byte[] replyPrivateData,
                Runnable accepted) {
        try {
            toInit(fabric, endpoint);
            toRts(endpoint, request.rnrTimerCode());
            RnrSetting rnr = endpoint.rnr();
            accepted.run(); // before the REP goes out: the peer may send as soon as it has it
            onId("rdma_accept", id -> {
                try (Arena arena = Arena.ofConfined()) {
                    cm.accept(id, RdmaCmLibrary.connectionParameters(arena,
                            new CmPrivateData(rnr.timerCode(), replyPrivateData).encode(), endpoint.qpNum(), rnr.retry()));
                }
            });
            await(RdmaCma.RDMA_CM_EVENT_ESTABLISHED, peer);
        } catch (VerbsException | FabricException e) {
            destroy();
            throw e instanceof FabricException f ? f : new FabricException("accepting " + peer + " through rdma_cm failed: "
                    + e.getMessage(), e);
        }
    }

    void reject(String reason) {
        try {
            onId("rdma_reject", id -> cm.reject(id, CmPrivateData.reject(reason)));
        } finally {
            destroy();
        }
    }

    // ------------------------------------------------------------------ QP transitions

    /** INIT → INIT with rdma_cm's port and P_Key (the QP went to INIT before the id knew its port), our access. */
    private void toInit(VerbsFabric fabric, VerbsEndpoint endpoint) {
        int access = fabric.connectionParameters(0, 0).accessFlags();
        modify(endpoint, "INIT", Verbs.IBV_QPS_INIT, attr -> {
            Verbs.ibv_qp_attr$qp_access_flags.set(attr, 0L, access);
            return Verbs.IBV_QP_ACCESS_FLAGS;
        });
    }

    /** RTR with the RNR timer the peer asked for, RTS with our RNR retry count. */
    private void toRts(VerbsEndpoint endpoint, int peerRnrTimerCode) {
        modify(endpoint, "RTR", Verbs.IBV_QPS_RTR, attr -> {
            Verbs.ibv_qp_attr$min_rnr_timer.set(attr, 0L, (byte) peerRnrTimerCode);
            return Verbs.IBV_QP_MIN_RNR_TIMER;
        });
        int retry = endpoint.rnr().retry();
        modify(endpoint, "RTS", Verbs.IBV_QPS_RTS, attr -> {
            Verbs.ibv_qp_attr$rnr_retry.set(attr, 0L, (byte) retry);
            return Verbs.IBV_QP_RNR_RETRY;
        });
    }

    /**
     * One transition with rdma_init_qp_attr's attributes plus ours ({@code adjust} sets them and returns their mask),
     * with the id and the QP both held, so neither can be destroyed meanwhile.
     */
    private void modify(VerbsEndpoint endpoint, String state, int qpState,
                        java.util.function.ToIntFunction<MemorySegment> adjust) {
        onId("rdma_init_qp_attr (" + state + ")",
                id -> endpoint.onQueuePair(state, qp -> cm.modifyQp(id, qp, qpState, adjust)));
    }

    private CmEvent await(int expected, URI peer) {
        CmEvent event;
        try {
            event = setUp.poll(SET_UP_TIMEOUT_SECONDS, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new FabricException("interrupted waiting for " + CmEventChannel.name(expected) + " from " + peer, e);
        }
        if (event == null) {
            throw new FabricException("no " + CmEventChannel.name(expected) + " from " + peer + " within "
                    + SET_UP_TIMEOUT_SECONDS + " s");
        }
        if (event.type() == expected) {
            return event;
        }
        if (event == CHANNEL_CLOSED) {
            throw new FabricException("the fabric closed while waiting for " + CmEventChannel.name(expected) + " from "
                    + peer);
        }
        if (event.type() == RdmaCma.RDMA_CM_EVENT_REJECTED) {
            if (event.status() == RdmaCmLibrary.REJECT_CONSUMER_DEFINED && event.privateData().length > 0) {
                throw new FabricException("connection to " + peer + " rejected: "
                        + CmPrivateData.decode(event.privateData()).reason());
            }
            throw new FabricException("connection to " + peer + " rejected by the CM (status " + event.status()
                    + (event.status() == 8 ? ": nobody listens on that port" : "") + ")");
        }
        throw new FabricException("connection set-up with " + peer + " got " + CmEventChannel.name(event.type())
                + " (status " + event.status() + ") waiting for " + CmEventChannel.name(expected));
    }

    // ------------------------------------------------------------------ connected

    /** Hands breaking events to the endpoint from now on; false if the connection already ended. */
    boolean attach(VerbsEndpoint connected) {
        synchronized (this) {
            if (!ended) {
                endpoint = connected;
                return true;
            }
        }
        destroy();
        return false;
    }

    /** rdma_disconnect, once: the peer gets DISCONNECTED, and so do we (then the id is destroyed). */
    @Override
    public synchronized void close() {
        if (disconnected || destroyed) {
            return;
        }
        disconnected = true;
        try {
            cm.disconnect(id);
        } catch (VerbsException e) {
            // not connected (any more): nothing to tell the peer
        }
    }

    /** Destroys the id once; the channel's own close goes through here too ({@link #channelClosing}). */
    synchronized void destroy() {
        if (destroyed) {
            return;
        }
        destroyed = true;
        try {
            events.destroyId(id);
        } catch (VerbsException e) {
            // the kernel refused (the id is gone with its device): librdmacm freed nothing we still use
        }
    }
}
