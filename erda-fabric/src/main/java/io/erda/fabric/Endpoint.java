package io.erda.fabric;

import java.net.URI;

/**
 * One end of a reliable connection: an RC queue pair.
 *
 * <h2>Life cycle and errors</h2>
 * Created {@link State#IDLE} by {@link Fabric#createEndpoint}, then {@link #connect} (client) or
 * {@link ConnectionRequest#accept} (server). The states, what moves an endpoint between them (the first error
 * completion, a broken connection, {@link #abort}, {@link #close}) and what becomes of work posted in each are
 * described in one place, {@link AbstractEndpoint}, which every provider's endpoint extends.
 *
 * <h2>Ordering (reliable connection)</h2>
 * Posted send-side requests execute in posting order. The completion of a READ, an atomic or a FLUSH implies that
 * every earlier WRITE on this endpoint is visible at the target. Completions of one queue appear in order.
 *
 * <h2>Threads</h2>
 * {@link #post} and {@link #postRecv} are thread-safe.
 */
public interface Endpoint extends AutoCloseable {

    /** The states of a connection; {@link AbstractEndpoint} describes them and their transitions. */
    enum State { IDLE, CONNECTING, CONNECTED, ERROR, CLOSED }

    /** Connects to a listener; blocks until accepted. Private data (at most {@link Fabric#MAX_PRIVATE_DATA} bytes) reaches the listener. */
    void connect(URI uri, byte[] privateData) throws FabricException;

    /** Posts a send-side work request. Throws {@link FabricException} only if the send queue is full or the endpoint closed. */
    void post(WorkRequest request) throws FabricException;

    /**
     * Posts a signalled request, and where the provider can finish it on the calling thread at once, does so and
     * queues no completion for it: true means it completed successfully here. False means it was posted as by {@link
     * #post} and completes on the send queue as usual (an error always does). For a caller that waits for each request
     * it posts on a send queue of its own ({@link SyncEndpoint}): whoever else takes from the queue would not see the
     * request at all. The default posts; shm executes a one-sided READ or WRITE at once when nothing posted before it
     * is still outstanding (the order post gives), which spares the queue round trip (a GET is two such READs).
     */
    default boolean executeNow(WorkRequest request) throws FabricException {
        post(request);
        return false;
    }

    /** Posts a receive buffer. Throws {@link FabricException} only if the receive queue is full or the endpoint closed. */
    void postRecv(RecvRequest request) throws FabricException;

    CompletionQueue sendQueue();

    CompletionQueue recvQueue();

    State state();

    /** The peer's address (null until connected). */
    URI peer();

    /** Private data the peer gave when the connection was set up (connect or accept), empty if none. */
    byte[] peerPrivateData();

    Fabric fabric();

    /**
     * Breaks the connection at once, as a process death or cable pull would: nothing in flight is finished;
     * both sides flush with errors. Used by fault injection and by applications abandoning a peer.
     */
    void abort();

    /** Disconnects; outstanding requests complete with WR_FLUSH_ERROR. Idempotent. */
    @Override
    void close();
}
