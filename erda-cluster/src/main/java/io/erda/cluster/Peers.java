package io.erda.cluster;

import io.erda.client.ClientOptions;
import io.erda.client.ErdaClient;
import io.erda.cluster.client.ClusterView;
import io.erda.cluster.client.DetachedClose;
import java.net.URI;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Supplier;

/**
 * A member's connections to the other members, through which a primary forwards replica reservations and fills its
 * backups ({@link PrimaryShard}, {@link BackupFill}): one {@link ErdaClient} per member, made on first use from the
 * URI the member's registration names, and forgotten when that connection fails or the member leaves or comes back
 * at another URI; a forgotten client is closed in the background ({@link DetachedClose}).
 */
final class Peers {
    private record Peer(URI uri, ErdaClient client) {
    }

    /** The member's view ({@link MemberState#view}): made as the member starts, after this. */
    private final Supplier<ClusterView> view;
    private final Map<Integer, Peer> peers = new ConcurrentHashMap<>();

    Peers(Supplier<ClusterView> view) {
        this.view = view;
    }

    /** The client of member {@code server}, connected on first use. */
    ErdaClient peer(int server) {
        URI uri = view.get().server(server);
        if (uri == null) {
            throw new IllegalStateException("server " + server + " is not registered");
        }
        Peer p = peers.get(server);
        if (p != null && p.uri().equals(uri)) {
            return p.client();
        }
        if (p != null) {
            failed(server, null);
        }
        return peers.computeIfAbsent(server, s -> new Peer(uri, ErdaClient.connect(ClientOptions.of(uri).withPoolSize(4))))
                .client();
    }

    /**
     * Forgets the client of a peer whose connection failed (a fabric error) or that left, so the next use reconnects;
     * the old one is closed in the background ({@link DetachedClose}).
     */
    void failed(int server, Throwable cause) {
        if (cause == null || cause instanceof io.erda.fabric.FabricException) {
            Peer broken = peers.remove(server);
            if (broken != null) {
                DetachedClose.start(broken.client(), "peer-" + server);
            }
        }
    }

    /** On a map change: forgets the clients of members no longer registered at the URI they were connected to. */
    void dropGone() {
        Map<Integer, URI> live = view.get().servers();
        for (Map.Entry<Integer, Peer> e : List.copyOf(peers.entrySet())) {
            if (!e.getValue().uri().equals(live.get(e.getKey()))) {
                failed(e.getKey(), null);
            }
        }
    }

    /** Closes every client, here and now (the member is closing). */
    void close() {
        for (Peer peer : peers.values()) {
            peer.client().close();
        }
    }
}
