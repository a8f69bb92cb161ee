package io.erda.cluster.client;

import io.erda.client.ClientOptions;
import io.erda.client.ClientProvider;
import io.erda.client.ErdaClient;
import io.erda.client.ErdaException;
import io.erda.client.KeyValueClient;
import io.erda.fabric.FabricException;
import io.erda.protocol.PutReply;
import io.erda.protocol.WireStatus;
import io.erda.protocol.memory.Key;
import java.lang.foreign.MemorySegment;
import java.net.URI;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.LongAdder;
import java.util.function.Function;
import org.apache.curator.framework.CuratorFramework;

/**
 * The {@code zk://host:port/path} client ([cluster]): watches the shard map in ZooKeeper and sends each key's
 * operation to its shard's primary through one {@link ErdaClient} per server (its own pool of connections). A PUT
 * whose reply names a backup reservation WRITEs the object there too, through that server's client, and applies that
 * server's persistence method before it returns (the backup's WRITE before the primary's). A map change
 * drops only the clients of servers that left it, closing them in the background ({@link DetachedClose}). An operation
 * starts only while the map is confirmed ({@link MapLease}): the client side of fencing.
 *
 * <p>An operation refused because the map moved ({@code NOT_PRIMARY}), because the primary could not reach its
 * backup ({@code BACKUP_UNAVAILABLE}), or that failed on the fabric (the primary died) is tried again on the then
 * current map, after a pause, until the operation timeout ({@link ClientOptions#operationTimeout()}); a PUT tried
 * again is a new PUT (last writer wins). A PUT or DELETE that failed after its first WRITE is not tried again
 * ({@link io.erda.client.WriteOutcomeUnknownException}): it may have taken effect, and a second PUT of the same value
 * landing after another client's write would make one operation take effect twice.
 */
public final class ClusterClient implements KeyValueClient {
    /** ZooKeeper session timeout of a client: only its watches depend on it. */
    private static final int SESSION_TIMEOUT_MILLIS = 10_000;
    /** Short: a failover's first acknowledged PUT should not wait on a retry's sleep. */
    private static final long PAUSE_MILLIS = 5;
    /**
     * How long one attempt on one member may take (connect, or a request's reply) before the operation is tried again
     * on the then current map: a member that paused or hung is given up on, not waited for the whole operation timeout.
     */
    static final java.time.Duration MEMBER_ATTEMPT_TIMEOUT = java.time.Duration.ofSeconds(2);

    private final ClientOptions options;
    private final CuratorFramework zk;
    private final ClusterView view;
    private final MapLease lease;
    private final Map<Integer, Member> members = new ConcurrentHashMap<>();
    private final LongAdder retries = new LongAdder();
    private volatile boolean closed;

    private record Member(URI uri, ErdaClient client) {
    }

    private ClusterClient(ClientOptions options) {
        this.options = options;
        this.zk = Zk.connect(options.uri(), SESSION_TIMEOUT_MILLIS);
        this.view = new ClusterView(zk);
        view.onChange(this::dropGoneMembers);
        view.start();
        this.lease = new MapLease(zk, view);
    }

    public static ClusterClient connect(URI uri) {
        return connect(ClientOptions.of(uri));
    }

    /** Connects to ZooKeeper and waits (at most the operation timeout) for the shard map. */
    public static ClusterClient connect(ClientOptions options) {
        ClusterClient client = new ClusterClient(options);
        long deadline = System.nanoTime() + options.operationTimeout().toNanos();
        while (client.view.map() == null) {
            if (System.nanoTime() > deadline) {
                client.close();
                throw new IllegalStateException("no shard map at " + options.uri() + " within "
                        + options.operationTimeout().toMillis() + " ms");
            }
            pause();
        }
        return client;
    }

    /** The map this client routes by now. */
    public ShardMap shardMap() {
        return view.map();
    }

    /** Waits until the map is as {@code wanted} (a fill done, a failover seen); fails naming the map after {@code timeout}. */
    public ShardMap awaitMap(java.util.function.Predicate<ShardMap> wanted, java.time.Duration timeout)
            throws InterruptedException {
        long deadline = System.nanoTime() + timeout.toNanos();
        while (!wanted.test(view.map())) {
            if (System.nanoTime() > deadline) {
                throw new IllegalStateException("shard map still " + view.map() + " after " + timeout.toSeconds() + " s");
            }
            Thread.sleep(PAUSE_MILLIS);
        }
        return view.map();
    }

    /** The fabric URI server {@code id} registered, or null if it is not registered. */
    public URI serverUri(int id) {
        return view.server(id);
    }

    /** Operations tried again after a map change, a refused reservation or a dead server. */
    public long retries() {
        return retries.sum();
    }

    @Override
    public byte[] get(byte[] key) {
        return onPrimary(Key.of(MemorySegment.ofArray(key)), c -> c.get(key));
    }

    @Override
    public long get(MemorySegment key, MemorySegment valueOut) {
        return onPrimary(Key.of(key), c -> c.get(key, valueOut));
    }

    @Override
    public void put(byte[] key, byte[] value) {
        put(MemorySegment.ofArray(key), MemorySegment.ofArray(value));
    }

    @Override
    public void put(MemorySegment key, MemorySegment value) {
        onPrimary(Key.of(key), c -> {
            c.put(key, value);
            return null;
        });
    }

    @Override
    public void delete(byte[] key) {
        delete(MemorySegment.ofArray(key));
    }

    @Override
    public void delete(MemorySegment key) {
        onPrimary(Key.of(key), c -> {
            c.delete(key);
            return null;
        });
    }

    private <T> T onPrimary(Key key, Function<ErdaClient, T> operation) {
        long deadline = System.nanoTime() + options.operationTimeout().toNanos();
        for (int attempt = 1; ; attempt++) {
            if (closed) {
                throw new IllegalStateException("client for " + options.uri() + " is closed");
            }
            ShardMap map = view.map();
            int shard = map.shardOf(key.hash());
            if (!lease.valid()) {
                if (System.nanoTime() > deadline) {
                    long age = lease.ageNanos();
                    throw new IllegalStateException("shard " + shard + ": the shard map (epoch " + map.epoch()
                            + ") could not be confirmed with ZooKeeper at " + options.uri().getRawAuthority() + " for "
                            + (age < 0 ? "ever" : age / 1_000_000 + " ms") + " (a map is routed by only "
                            + MapLease.DURATION.toMillis() + " ms after its last confirmation); gave up after "
                            + options.operationTimeout().toMillis() + " ms");
                }
                pause();
                continue;
            }
            int primary = map.primary(shard);
            if (map.state(shard) == ShardMap.State.LOST) {
                throw new IllegalStateException("shard " + shard + " is lost (map epoch " + map.epoch() + "): its "
                        + "primary, server " + primary + ", is gone and it had no full backup to promote; it returns to "
                        + "service only when that server comes back on its store");
            }
            try {
                return operation.apply(member(primary));
            } catch (ErdaException e) {
                if (e.status() != WireStatus.NOT_PRIMARY && e.status() != WireStatus.BACKUP_UNAVAILABLE
                        || System.nanoTime() > deadline) {
                    throw e;
                }
            } catch (io.erda.client.WriteOutcomeUnknownException e) {
                drop(primary);
                throw e; // it may have taken effect: a second PUT of it could land after another client's write
            } catch (FabricException | MemberGone e) {
                drop(primary);
                if (System.nanoTime() > deadline) {
                    throw new IllegalStateException("shard " + shard + " (primary server " + primary + ", map epoch "
                            + map.epoch() + ") not reachable within " + options.operationTimeout().toMillis()
                            + " ms, " + attempt + " attempts", e);
                }
            }
            retries.increment();
            pause();
        }
    }

    /** The client of server {@code id}, connected on first use. */
    private ErdaClient member(int id) {
        Member m = members.get(id);
        if (m != null) {
            return m.client();
        }
        URI uri = view.server(id);
        if (uri == null) {
            throw new MemberGone("server " + id + " is not registered");
        }
        java.time.Duration attempt = options.operationTimeout().compareTo(MEMBER_ATTEMPT_TIMEOUT) < 0
                ? options.operationTimeout() : MEMBER_ATTEMPT_TIMEOUT;
        return members.computeIfAbsent(id, s -> new Member(uri, ErdaClient.connect(ClientOptions.of(uri)
                .withPoolSize(options.poolSize()).withOperationTimeout(attempt), this::writeBackup))).client();
    }

    /** The backup half of a replicated PUT; a failure fails the PUT, which is then tried again whole. */
    private void writeBackup(int server, PutReply reservation, MemorySegment object) {
        try {
            member(server).writeReserved(reservation, object);
        } catch (FabricException e) {
            drop(server);
            throw e;
        }
    }

    private static final class MemberGone extends RuntimeException {
        MemberGone(String message) {
            super(message);
        }
    }

    /** Forgets server {@code id}'s client; it is closed in the background ({@link DetachedClose}). */
    private void drop(int id) {
        Member gone = members.remove(id);
        if (gone != null) {
            DetachedClose.start(gone.client(), "member-" + id);
        }
    }

    private void dropGoneMembers() {
        Map<Integer, URI> live = view.servers();
        for (Map.Entry<Integer, Member> e : List.copyOf(members.entrySet())) {
            if (!e.getValue().uri().equals(live.get(e.getKey()))) {
                drop(e.getKey());
            }
        }
    }

    private static void pause() {
        try {
            Thread.sleep(PAUSE_MILLIS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted", e);
        }
    }

    @Override
    public void close() {
        if (closed) {
            return;
        }
        closed = true;
        lease.close();
        view.close();
        zk.close();
        for (Integer id : List.copyOf(members.keySet())) {
            Member m = members.remove(id);
            if (m != null) {
                m.client().close();
            }
        }
    }

    /** {@code zk://} for {@link KeyValueClient#connect}: erda-cli and the YCSB binding take the cluster's URI. */
    public static final class Provider implements ClientProvider {
        @Override
        public String scheme() {
            return "zk";
        }

        @Override
        public KeyValueClient connect(ClientOptions options) {
            return ClusterClient.connect(options);
        }
    }
}
