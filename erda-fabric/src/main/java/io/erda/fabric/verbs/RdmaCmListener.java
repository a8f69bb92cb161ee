package io.erda.fabric.verbs;

import io.erda.fabric.ConnectionRequest;
import io.erda.fabric.FabricException;
import io.erda.fabric.Listener;
import io.erda.ffm.rdmacm.CmEvent;
import io.erda.ffm.rdmacm.RdmaCma;
import io.erda.ffm.rdmacm.RdmaCmLibrary;
import io.erda.ffm.verbs.VerbsException;
import java.lang.foreign.MemorySegment;
import java.net.InetSocketAddress;
import java.net.URI;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * A listening rdma_cm id on the URI's host:port (port 0 picks one). Its CONNECT_REQUEST events arrive on the
 * fabric's event thread, each with a new id that becomes a {@link RdmaCmConnectionRequest}; a request whose id is
 * bound to another device than the fabric's (whose PD holds the endpoints' QPs and registrations) is rejected
 * there and then.
 */
final class RdmaCmListener implements Listener {
    private static final int BACKLOG = 128;

    private final VerbsFabric fabric;
    private final CmEventChannel events;
    private final MemorySegment id;
    private final URI uri;
    private final LinkedBlockingQueue<RdmaCmConnectionRequest> requests = new LinkedBlockingQueue<>();
    private final AtomicBoolean closed = new AtomicBoolean();

    private RdmaCmListener(VerbsFabric fabric, CmEventChannel events, URI requested) {
        this.fabric = fabric;
        this.events = events;
        this.id = events.createId(this::onEvent);
        RdmaCmLibrary cm = events.library();
        try {
            cm.bindAddr(id, new InetSocketAddress(requested.getHost(), requested.getPort()));
            cm.listen(id, BACKLOG);
            this.uri = URI.create("verbs://" + VerbsListener.hostPart(requested.getHost()) + ":" + cm.sourcePort(id));
        } catch (VerbsException | IllegalArgumentException e) {
            events.destroyId(id);
            throw new FabricException("cannot listen on " + requested + " through rdma_cm: " + e.getMessage(), e);
        }
    }

    static RdmaCmListener bind(VerbsFabric fabric, CmEventChannel events, URI uri) {
        if (uri.getHost() == null || uri.getPort() < 0) {
            throw new FabricException("verbs listen URI " + uri + " needs host:port (port 0 picks one)");
        }
        return new RdmaCmListener(fabric, events, uri);
    }

    /** On the event thread. */
    private void onEvent(CmEvent event) {
        if (event.type() != RdmaCma.RDMA_CM_EVENT_CONNECT_REQUEST) {
            return;
        }
        CmConnection connection = new CmConnection(events, event.id());
        try {
            MemorySegment device = RdmaCmLibrary.verbsOf(event.id());
            fabric.checkSameDevice(device, "connection request on " + uri);
            InetSocketAddress from = events.library().peerAddress(event.id());
            URI peer = URI.create("verbs://" + VerbsListener.hostPart(from.getHostString()) + ":" + from.getPort());
            RdmaCmConnectionRequest request = new RdmaCmConnectionRequest(fabric, connection,
                    CmPrivateData.decode(event.privateData()), peer);
            requests.add(request);
            if (closed.get() && requests.remove(request)) {
                request.reject("listener closed");
            }
        } catch (RuntimeException e) {
            // any failure to take the request answers it: an unanswered request leaves its peer waiting
            connection.reject(e.getMessage());
        }
    }

    @Override
    public URI uri() {
        return uri;
    }

    @Override
    public ConnectionRequest accept(long timeout, TimeUnit unit) throws InterruptedException {
        return requests.poll(timeout, unit);
    }

    @Override
    public void close() {
        if (closed.compareAndSet(false, true)) {
            events.destroyId(id);
            RdmaCmConnectionRequest pending;
            while ((pending = requests.poll()) != null) {
                pending.reject("listener closed");
            }
            fabric.forget(this);
        }
    }
}
