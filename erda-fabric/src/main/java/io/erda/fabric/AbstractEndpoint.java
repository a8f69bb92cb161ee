package io.erda.fabric;

import java.net.URI;

/**
 * What the endpoints of every provider share: the state machine of a reliable connection, the one place it is
 * described, and the bookkeeping that goes with it (peer, its private data, why the connection broke, the fabric
 * and the completion queues). A provider's endpoint extends this and adds its transport.
 *
 * <h2>States</h2>
 * <pre>
 *   IDLE ---beginConnecting---&gt; CONNECTING ---open, established---&gt; CONNECTED
 *    ^                               |
 *    +--------- setUpFailed ---------+
 *
 *   IDLE, CONNECTING, CONNECTED ---toError---&gt; ERROR
 *   any state ---toClosed---&gt; CLOSED (final)
 * </pre>
 * <ul>
 *   <li>{@link State#IDLE}: made by {@link Fabric#createEndpoint}. Receives may be posted at once, so that they are
 *       in place before the peer can send; send-side work posted before the endpoint is connected completes with
 *       {@link Status#WR_FLUSH_ERROR}.</li>
 *   <li>{@link State#CONNECTING}: {@link #connect} (client) or {@link ConnectionRequest#accept} (server) is under
 *       way; a second one is refused. A set-up that fails returns the endpoint to IDLE, or breaks it (ERROR) where
 *       the provider cannot undo what it did (the accepting verbs endpoint, whose QP may have left INIT).</li>
 *   <li>{@link State#CONNECTED}: open for posting. A provider may open before its connection manager's last step
 *       ({@link #open}): the peer may send as soon as it has the answer, so the accepting side must be able to
 *       reply before its accepting thread has even returned from sending it.</li>
 *   <li>{@link State#ERROR}: as in verbs, the first error completion moves the endpoint here, and so do a broken
 *       connection and {@link #abort} (shm breaks only a connected endpoint: before, it has nothing to tear down
 *       and abort() does nothing). Every request still outstanding, and every request posted later, completes
 *       with {@link Status#WR_FLUSH_ERROR}; the connection is torn down and the peer's endpoint goes to ERROR too
 *       (its posted receives complete with WR_FLUSH_ERROR). Nothing hangs: every posted request completes. The
 *       reason the endpoint entered ERROR with is kept ({@link #brokenBecause}) so that completions a provider
 *       flushes later (verbs: the RNIC's) can name what broke the connection.</li>
 *   <li>{@link State#CLOSED}: {@link #close} from any state, idempotently; outstanding requests complete with
 *       WR_FLUSH_ERROR and posting throws.</li>
 * </ul>
 * A transition happens only from the states drawn, so a set-up that fails or finishes after an {@code abort()} or
 * {@code close()} leaves the endpoint broken or closed; {@link #toError} and {@link #toClosed} report whether they
 * moved it, so that what goes with the move (flushing, tearing down) happens once.
 *
 * <h2>Locking</h2>
 * A provider names in {@link #lock()} the monitor that guards its posting path, and every transition takes it: a
 * poster that reads the state and acts on it under that monitor never interleaves with a transition, and a provider
 * that must move the state and its own queues in one step holds it already (monitors re-enter). {@link #state()}
 * and the other accessors read volatile fields without the lock: accessors, diagnostics and engine threads' quick
 * checks rely on that.
 *
 * @param <F> the provider's fabric
 * @param <Q> the provider's completion queues
 */
public abstract class AbstractEndpoint<F extends Fabric, Q extends CompletionQueue> implements Endpoint {
    private final F fabric;
    private final Q sendQueue;
    private final Q recvQueue;

    /** Written under {@link #lock()}; volatile because it is read without it. */
    private volatile State state = State.IDLE;
    private volatile URI peer;
    private volatile byte[] peerPrivateData = new byte[0];
    private volatile String brokenBecause;

    protected AbstractEndpoint(F fabric, Q sendQueue, Q recvQueue) {
        this.fabric = fabric;
        this.sendQueue = sendQueue;
        this.recvQueue = recvQueue;
    }

    /** The monitor that guards the provider's posting path; every transition takes it. */
    protected abstract Object lock();

    // ------------------------------------------------------------------ transitions

    /** IDLE → CONNECTING; anything else is refused: one set-up per endpoint. */
    protected final void beginConnecting() {
        synchronized (lock()) {
            if (state != State.IDLE) {
                throw new FabricException("endpoint is " + state + "; only an IDLE endpoint can connect or accept");
            }
            state = State.CONNECTING;
        }
    }

    /** Records the peer before the set-up is done, so that a failure from now on names it. */
    protected final void connectingTo(URI peerUri) {
        peer = peerUri;
    }

    /** CONNECTING → IDLE after a failed set-up; an {@code abort()} or {@code close()} meanwhile stands. */
    protected final void setUpFailed() {
        synchronized (lock()) {
            if (state == State.CONNECTING) {
                state = State.IDLE;
            }
        }
    }

    /** CONNECTING → CONNECTED, nothing else: an endpoint that broke or closed meanwhile stays so. */
    protected final void open() {
        synchronized (lock()) {
            if (state == State.CONNECTING) {
                state = State.CONNECTED;
            }
        }
    }

    /** The set-up is done: records the peer and its private data, and {@link #open}s (if it is not open already). */
    protected final void established(URI peerUri, byte[] peerData) {
        peer = peerUri;
        peerPrivateData = peerData.clone();
        open();
    }

    /**
     * IDLE, CONNECTING or CONNECTED → ERROR, keeping {@code why} for what is flushed later; false (and nothing
     * changes) if the endpoint is in ERROR or CLOSED already.
     */
    protected final boolean toError(String why) {
        synchronized (lock()) {
            if (state == State.ERROR || state == State.CLOSED) {
                return false;
            }
            brokenBecause = why;
            state = State.ERROR;
            return true;
        }
    }

    /** Any state → CLOSED, with {@code why} unless the endpoint broke earlier; false if it was CLOSED already. */
    protected final boolean toClosed(String why) {
        synchronized (lock()) {
            if (state == State.CLOSED) {
                return false;
            }
            if (brokenBecause == null) {
                brokenBecause = why;
            }
            state = State.CLOSED;
            return true;
        }
    }

    /** What first moved the endpoint to ERROR or CLOSED; null while it has not left IDLE, CONNECTING or CONNECTED. */
    protected final String brokenBecause() {
        return brokenBecause;
    }

    // ------------------------------------------------------------------ accessors

    @Override
    public final State state() {
        return state;
    }

    @Override
    public final URI peer() {
        return peer;
    }

    @Override
    public final byte[] peerPrivateData() {
        return peerPrivateData.clone();
    }

    @Override
    public final F fabric() {
        return fabric;
    }

    @Override
    public final Q sendQueue() {
        return sendQueue;
    }

    @Override
    public final Q recvQueue() {
        return recvQueue;
    }

    @Override
    public String toString() {
        return getClass().getSimpleName() + "[" + state + ", peer " + peer + "]";
    }
}
