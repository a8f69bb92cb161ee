package io.erda.server.request;

import io.erda.fabric.Completion;
import io.erda.fabric.Endpoint;
import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.BooleanSupplier;
import java.util.logging.Level;
import java.util.logging.Logger;

/**
 * The open connections, by endpoint: the acceptor adds them, the workers find a completion's connection here and close
 * one that failed, and the log cleaner tells all of them a new head array ({@link #notifyHeadState}). Forgetting a
 * connection returns its completion-queue entries to the {@link CompletionBudget}.
 */
final class Connections {
    private static final Logger LOG = Logger.getLogger(Connections.class.getName());

    private final Map<Endpoint, ServerConnection> byEndpoint = new ConcurrentHashMap<>();
    private final CompletionBudget budget;

    Connections(CompletionBudget budget) {
        this.budget = budget;
    }

    void add(ServerConnection connection) {
        byEndpoint.put(connection.endpoint(), connection);
    }

    /** The connection of {@code endpoint}, or null (never accepted, or closed). */
    ServerConnection get(Endpoint endpoint) {
        return byEndpoint.get(endpoint);
    }

    /** Whether {@code connection} is still open (not forgotten, nor replaced by another of the same endpoint). */
    boolean isOpen(ServerConnection connection) {
        return byEndpoint.get(connection.endpoint()) == connection;
    }

    /** Connections currently open. */
    int count() {
        return byEndpoint.size();
    }

    /** Drops a connection from the table and returns its completion-queue entries; true if it was there. */
    boolean forget(ServerConnection connection) {
        boolean present = byEndpoint.remove(connection.endpoint()) != null;
        budget.forget(connection.endpoint());
        return present;
    }

    void close(ServerConnection connection, String why) {
        close(connection, why, false);
    }

    /** A failed completion closes its connection: a line at WARNING, unless the client simply closed its side. */
    void close(ServerConnection connection, Completion failed) {
        close(connection, failed.toString(), failed.peerClosed());
    }

    private void close(ServerConnection connection, String why, boolean orderly) {
        if (forget(connection)) {
            // a broken connection is worth a line (with the provider's cause of a flush); a client leaving is not
            LOG.log(orderly ? Level.FINE : Level.WARNING,
                    () -> "closing " + connection + ": " + why);
            connection.close();
        }
    }

    /**
     * Paper §4.4: every connection of the Erda protocol is told the new head array (HEAD_STATE). Returns whether
     * every one of them has acknowledged it (or is gone).
     */
    BooleanSupplier notifyHeadState() {
        Map<ServerConnection, Integer> due = new HashMap<>();
        for (ServerConnection c : byEndpoint.values()) {
            try {
                due.put(c, c.notifyHeadState());
            } catch (RuntimeException e) {
                close(c, "HEAD_STATE failed: " + e); // endpoint failed under us
            }
        }
        return () -> due.entrySet().stream().allMatch(e -> e.getKey().acknowledged(e.getValue()));
    }

    /** Closes every connection (the server is closing). */
    void closeAll() {
        byEndpoint.values().forEach(ServerConnection::close);
        byEndpoint.clear();
    }
}
