package io.erda.server.request;

import io.erda.fabric.Endpoint;
import io.erda.fabric.FabricCapabilities;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The entries of the two completion queues every connection shares (one for sends, one for receives): each
 * connection's queue depths are reserved here before its endpoint is made and returned when it is forgotten, so the
 * shared queues can never overrun. A connection whose depths do not fit is refused, with why.
 */
final class CompletionBudget {
    /** Entries of each shared completion queue. */
    private final int entries;
    private final FabricCapabilities device;
    /** Each endpoint's reserved depths: send, receive. */
    private final Map<Endpoint, int[]> reserved = new ConcurrentHashMap<>();
    private int sendReserved; // guarded by reserved
    private int recvReserved; // guarded by reserved

    CompletionBudget(int entries, FabricCapabilities device) {
        this.entries = entries;
        this.device = device;
    }

    /**
     * Reserves a connection's queue depths; null when they fit, else why not (the reason the connection is rejected
     * with; {@code connections} is how many are open, for that reason).
     */
    String reserve(int send, int recv, int connections) {
        synchronized (reserved) {
            if (sendReserved + send > entries || recvReserved + recv > entries) {
                return "server full: " + connections + " connections use " + sendReserved + " of the " + entries
                        + " send and " + recvReserved + " receive completion-queue entries (" + device.device()
                        + " allows " + device.maxCompletionQueueEntries() + " per queue)";
            }
            sendReserved += send;
            recvReserved += recv;
            return null;
        }
    }

    /** Returns depths {@link #reserve}d for a connection that got no endpoint. */
    void release(int send, int recv) {
        synchronized (reserved) {
            sendReserved -= send;
            recvReserved -= recv;
        }
    }

    /** The depths reserved are {@code endpoint}'s, returned when it is {@link #forget forgotten}. */
    void assign(Endpoint endpoint, int send, int recv) {
        reserved.put(endpoint, new int[] {send, recv});
    }

    /** Returns what {@code endpoint}'s connection reserved, if anything is still reserved for it. */
    void forget(Endpoint endpoint) {
        int[] depths = reserved.remove(endpoint);
        if (depths != null) {
            release(depths[0], depths[1]);
        }
    }
}
