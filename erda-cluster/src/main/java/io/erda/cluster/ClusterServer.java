package io.erda.cluster;

import io.erda.client.ClientOptions;
import io.erda.client.ErdaClient;
import io.erda.core.hash.Key;
import io.erda.protocol.PutReply;
import io.erda.protocol.PutRequest;
import io.erda.protocol.WireStatus;
import io.erda.server.Replication;
import io.erda.server.RequestException;
import io.erda.server.RequestServer;
import io.erda.server.ServerConfig;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.logging.Level;
import java.util.logging.Logger;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.recipes.leader.LeaderLatch;
import org.apache.curator.framework.state.ConnectionState;
import org.apache.zookeeper.CreateMode;
import org.apache.zookeeper.KeeperException;
import org.apache.zookeeper.data.Stat;

/**
 * One member of a cluster ([cluster]): an Erda server ({@link RequestServer}) whose PUTs are decided by the shard map
 * ({@link Replication}), registered in ZooKeeper as the ephemeral {@code /servers/ID}, and a candidate in the
 * {@code /coordinator} leader latch. The leader (one at a time, Curator's {@link LeaderLatch}) writes the map: the
 * first one once {@code initialServers} servers are registered, then, whenever a server's registration disappears
 * (its session expired: killed, hung or cut off), the map without it ({@link ShardMap#without}: its shards' backups
 * promoted). Every write is a compare-and-set on the map's znode version, so a deposed leader's late write fails.
 *
 * <p>A member whose own session is lost halts at once ({@link ConnectionState#LOST}): the others may already have
 * promoted its backups, and it must not go on answering PUTs as a primary.
 *
 * <p>A promoted backup needs no restart: its store already holds every acknowledged object of the shard (the
 * clients WROTE there before their PUT returned), and the reservations its primary made on it and no client
 * completed are settled by its own lease validator, as any lease ([leases]).
 */
public final class ClusterServer implements Replication, AutoCloseable {
    private static final Logger LOG = Logger.getLogger(ClusterServer.class.getName());
    private static final long RECONCILE_MILLIS = 200;

    private final URI zkUri;
    private final int id;
    private final int shards;
    private final int initialServers;
    private final int sessionTimeoutMillis;
    private final ServerConfig config;
    private final Map<Integer, ErdaClient> peers = new ConcurrentHashMap<>();
    private final ExecutorService[] ordered;
    private final ScheduledExecutorService coordinator = Executors.newSingleThreadScheduledExecutor(
            Thread.ofPlatform().name("erda-cluster-coordinator").daemon().factory());
    private CuratorFramework zk;
    private ClusterView view;
    private LeaderLatch latch;
    private RequestServer server;

    public ClusterServer(URI zkUri, int id, int shards, int initialServers, int sessionTimeoutMillis, ServerConfig config) {
        if (id < 0) {
            throw new IllegalArgumentException("server id " + id + " is negative");
        }
        if (shards < 1 || Integer.bitCount(shards) != 1 || shards > 4096) {
            throw new IllegalArgumentException("shard count " + shards + " is not a power of two in [1, 4096]");
        }
        if (initialServers < 2) {
            throw new IllegalArgumentException("initial servers " + initialServers + " < 2: a shard needs a primary and a backup");
        }
        this.zkUri = zkUri;
        this.id = id;
        this.shards = shards;
        this.initialServers = initialServers;
        this.sessionTimeoutMillis = sessionTimeoutMillis;
        this.config = config;
        this.ordered = new ExecutorService[shards];
        for (int s = 0; s < shards; s++) {
            ordered[s] = Executors.newSingleThreadExecutor(Thread.ofVirtual().name("erda-shard-" + s).factory());
        }
    }

    /** Starts the store and its server, then joins the cluster; returns once registered. */
    public ClusterServer start() throws Exception {
        zk = Zk.connect(zkUri, sessionTimeoutMillis);
        zk.getConnectionStateListenable().addListener((client, state) -> {
            if (state == ConnectionState.LOST) {
                System.err.println("erda-cluster-server " + id + ": ZooKeeper session lost; halting (its shards fail over)");
                Runtime.getRuntime().halt(3);
            }
        });
        view = new ClusterView(zk).start();
        view.onChange(this::dropGonePeers);
        server = RequestServer.start(config, this);
        register();
        latch = new LeaderLatch(zk, Zk.COORDINATOR, String.valueOf(id));
        latch.start();
        coordinator.scheduleWithFixedDelay(this::reconcileIfLeader, 0, RECONCILE_MILLIS, TimeUnit.MILLISECONDS);
        view.onChange(() -> coordinator.execute(this::reconcileIfLeader));
        return this;
    }

    /** The ephemeral registration; a previous session of the same id (a restart before it expired) is waited out. */
    private void register() throws Exception {
        byte[] uri = server.uri().toString().getBytes(StandardCharsets.UTF_8);
        long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(2L * sessionTimeoutMillis + 5000);
        while (true) {
            try {
                zk.create().creatingParentContainersIfNeeded().withMode(CreateMode.EPHEMERAL).forPath(Zk.server(id), uri);
                return;
            } catch (KeeperException.NodeExistsException e) {
                if (System.nanoTime() > deadline) {
                    throw new IllegalStateException("server id " + id + " is registered by another live server", e);
                }
                Thread.sleep(100);
            }
        }
    }

    public URI uri() {
        return server.uri();
    }

    public int id() {
        return id;
    }

    public RequestServer server() {
        return server;
    }

    // ------------------------------------------------------------------ the coordinator

    private void reconcileIfLeader() {
        try {
            if (latch != null && latch.hasLeadership()) {
                reconcile();
            }
        } catch (Exception e) {
            LOG.log(Level.WARNING, "coordinator: reconciling the shard map failed (next round retries)", e);
        }
    }

    private void reconcile() throws Exception {
        Set<Integer> live = new TreeSet<>();
        for (String child : zk.getChildren().forPath(Zk.SERVERS)) {
            live.add(Integer.parseInt(child));
        }
        Stat stat = new Stat();
        byte[] data;
        try {
            data = zk.getData().storingStatIn(stat).forPath(Zk.MAP);
        } catch (KeeperException.NoNodeException e) {
            if (live.size() >= initialServers) {
                ShardMap first = ShardMap.initial(shards, live);
                try {
                    zk.create().creatingParentContainersIfNeeded().forPath(Zk.MAP, first.encode());
                    LOG.info(() -> "coordinator " + id + ": first shard map " + first);
                } catch (KeeperException.NodeExistsException raced) {
                    // another coordinator's, a moment ago
                }
            }
            return;
        }
        ShardMap current = ShardMap.decode(data);
        ShardMap next = current.without(live);
        if (next != current) {
            try {
                zk.setData().withVersion(stat.getVersion()).forPath(Zk.MAP, next.encode());
                LOG.info(() -> "coordinator " + id + ": servers " + live + " live; shard map " + next);
            } catch (KeeperException.BadVersionException raced) {
                // the map changed since we read it: the next round starts from the new one
            }
        }
    }

    // ------------------------------------------------------------------ Replication

    @Override
    public Backup backupFor(Key key, boolean replica) {
        ShardMap map = view.map();
        if (map == null) {
            throw new RequestException(WireStatus.NOT_PRIMARY, "server " + id + " has no shard map yet");
        }
        int shard = map.shardOf(key.hash());
        if (replica) {
            if (map.backup(shard) != id) {
                throw new RequestException(WireStatus.NOT_PRIMARY, "server " + id + " is not the backup of shard " + shard
                        + " in map epoch " + map.epoch());
            }
            return null;
        }
        if (map.primary(shard) != id) {
            throw new RequestException(WireStatus.NOT_PRIMARY, "server " + id + " is not the primary of shard " + shard
                    + " in map epoch " + map.epoch() + " (server " + map.primary(shard) + " is)");
        }
        int backup = map.backup(shard);
        return backup == ShardMap.NONE ? null : new ToBackup(shard, backup);
    }

    private final class ToBackup implements Backup {
        private final int shard;
        private final int backup;

        ToBackup(int shard, int backup) {
            this.shard = shard;
            this.backup = backup;
        }

        @Override
        public int server() {
            return backup;
        }

        @Override
        public java.util.concurrent.Executor ordered() {
            return ordered[shard];
        }

        @Override
        public PutReply reserve(PutRequest request) {
            try {
                return peer(backup).reserveReplica(request.key(), request.valueLength(), request.delete());
            } catch (RuntimeException e) {
                if (e instanceof io.erda.fabric.FabricException) {
                    ErdaClient broken = peers.remove(backup);
                    if (broken != null) {
                        broken.close();
                    }
                }
                throw new RequestException(WireStatus.BACKUP_UNAVAILABLE, "shard " + shard + ": backup server " + backup
                        + " did not reserve: " + e.getMessage());
            }
        }
    }

    private ErdaClient peer(int server) {
        ErdaClient client = peers.get(server);
        if (client != null) {
            return client;
        }
        URI uri = view.server(server);
        if (uri == null) {
            throw new IllegalStateException("server " + server + " is not registered");
        }
        return peers.computeIfAbsent(server, s -> ErdaClient.connect(ClientOptions.of(uri).withPoolSize(4)));
    }

    private void dropGonePeers() {
        Map<Integer, URI> live = view.servers();
        for (Integer peer : List.copyOf(peers.keySet())) {
            if (!live.containsKey(peer)) {
                ErdaClient gone = peers.remove(peer);
                if (gone != null) {
                    gone.close();
                }
            }
        }
    }

    @Override
    public void close() {
        coordinator.shutdownNow();
        if (latch != null) {
            try {
                latch.close();
            } catch (Exception e) {
                LOG.log(Level.FINE, "leader latch close", e);
            }
        }
        if (view != null) {
            view.close();
        }
        if (zk != null) {
            zk.close();
        }
        for (ErdaClient peer : peers.values()) {
            peer.close();
        }
        for (ExecutorService e : ordered) {
            e.shutdownNow();
        }
        if (server != null) {
            server.close();
        }
    }
}
