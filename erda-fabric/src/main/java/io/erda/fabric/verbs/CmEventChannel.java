package io.erda.fabric.verbs;

import io.erda.fabric.FabricException;
import io.erda.ffm.rdmacm.CmEvent;
import io.erda.ffm.rdmacm.RdmaCma;
import io.erda.ffm.rdmacm.RdmaCmLibrary;
import io.erda.ffm.verbs.VerbsException;
import java.lang.foreign.MemorySegment;
import java.util.List;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Consumer;

/**
 * A fabric's rdma_cm event channel and the one platform thread that reads it ({@code rdma_get_cm_event} blocks in
 * native code, which would pin a virtual thread's carrier). Every event is acknowledged before it is handed to the
 * handler of its id (for CONNECT_REQUEST: of the listening id), so a handler may destroy ids: librdmacm's
 * rdma_destroy_id waits for the id's delivered events to be acknowledged. Handlers run on this thread and must not
 * block on another event. The thread polls the channel's fd with a short timeout to notice {@link #close()}.
 */
final class CmEventChannel implements AutoCloseable {
    private static final System.Logger LOG = System.getLogger(CmEventChannel.class.getName());
    private static final int POLL_MILLIS = 20;
    private static final List<String> NAMES = List.of("ADDR_RESOLVED", "ADDR_ERROR", "ROUTE_RESOLVED", "ROUTE_ERROR",
            "CONNECT_REQUEST", "CONNECT_RESPONSE", "CONNECT_ERROR", "UNREACHABLE", "REJECTED", "ESTABLISHED",
            "DISCONNECTED", "DEVICE_REMOVAL", "MULTICAST_JOIN", "MULTICAST_ERROR", "ADDR_CHANGE", "TIMEWAIT_EXIT");

    private final RdmaCmLibrary cm;
    private final MemorySegment channel;
    /** Live ids: the handler of their events, and what their owner does when the channel closes under it. */
    private final ConcurrentHashMap<Long, Owner> handlers = new ConcurrentHashMap<>();

    private record Owner(Consumer<CmEvent> handler, Runnable channelClosing) {}
    private final Thread reader;
    private volatile boolean closing;

    CmEventChannel(RdmaCmLibrary cm) {
        this.cm = cm;
        this.channel = cm.createEventChannel();
        this.reader = Thread.ofPlatform().daemon().name("verbs-rdma-cm-events").start(this::run);
    }

    static String name(int type) {
        return type >= 0 && type < NAMES.size() ? "RDMA_CM_EVENT_" + NAMES.get(type) : "rdma_cm event " + type;
    }

    RdmaCmLibrary library() {
        return cm;
    }

    /** A new RC id on this channel whose events go to {@code handler}; the channel destroys it if still live at close. */
    MemorySegment createId(Consumer<CmEvent> handler) {
        return createId(handler, () -> { });
    }

    /**
     * A new RC id whose owner is told, before the channel destroys the id at close, that it must stop using it:
     * {@code channelClosing} runs on the closing thread and typically destroys the id itself, under the lock its
     * own rdma_cm calls hold, so no thread calls librdmacm with an id that is already freed.
     */
    MemorySegment createId(Consumer<CmEvent> handler, Runnable channelClosing) {
        MemorySegment id = cm.createId(channel);
        handlers.put(id.address(), new Owner(handler, channelClosing));
        return id;
    }

    /** Routes the events of an id rdma_cm made (a CONNECT_REQUEST's) to {@code handler}; see {@link #createId}. */
    void route(MemorySegment id, Consumer<CmEvent> handler, Runnable channelClosing) {
        handlers.put(id.address(), new Owner(handler, channelClosing));
    }

    /**
     * rdma_destroy_id, exactly once per id: by whoever unregisters it first (its owner, or close()). A second call
     * returns false and touches nothing, so an id is never freed twice nor used after the channel that carried it.
     */
    boolean destroyId(MemorySegment id) {
        if (handlers.remove(id.address()) == null) {
            return false;
        }
        cm.destroyId(id);
        return true;
    }

    private void run() {
        while (!closing) {
            try {
                if (!RdmaCmLibrary.awaitEvent(channel, POLL_MILLIS) || closing) {
                    continue;
                }
                CmEvent event = cm.getEvent(channel);
                cm.ackEvent(event);
                MemorySegment owner = event.type() == RdmaCma.RDMA_CM_EVENT_CONNECT_REQUEST ? event.listenId() : event.id();
                Owner handler = handlers.get(owner.address());
                if (handler != null) {
                    handler.handler().accept(event);
                }
            } catch (RuntimeException e) {
                LOG.log(System.Logger.Level.WARNING, "rdma_cm event handling failed", e);
            }
        }
    }

    /**
     * Stops the reader; tells each owner of a live id to let go of it (a connection still setting up is woken and
     * destroys its id under its own lock), destroys the ids nobody destroyed, then the channel. Every id is
     * destroyed before the channel: rdma_destroy_id reads the id's channel.
     */
    @Override
    public void close() {
        closing = true;
        try {
            reader.join();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        for (Long id : List.copyOf(handlers.keySet())) {
            Owner owner = handlers.get(id);
            try {
                if (owner != null) {
                    owner.channelClosing().run();
                }
                destroyId(MemorySegment.ofAddress(id).reinterpret(RdmaCma.rdma_cm_id.byteSize()));
            } catch (VerbsException | FabricException e) {
                LOG.log(System.Logger.Level.DEBUG, "rdma_destroy_id on close: {0}", e.getMessage());
            }
        }
        cm.destroyEventChannel(channel);
    }
}
