package io.erda.cluster;

import io.erda.cluster.client.ClusterView;
import io.erda.cluster.client.ShardMap;
import io.erda.cluster.client.Zk;
import io.erda.cluster.client.ZkSecret;
import io.erda.protocol.PutRequest;
import io.erda.protocol.memory.Key;
import io.erda.server.RequestServer;
import io.erda.server.ServerConfig;
import io.erda.server.request.Replication;
import java.net.URI;
import java.util.concurrent.TimeUnit;
import java.util.logging.Level;
import java.util.logging.Logger;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.recipes.leader.LeaderLatch;
import org.apache.curator.framework.state.ConnectionState;
import org.apache.zookeeper.CreateMode;
import org.apache.zookeeper.KeeperException;

/**
 * One member of a cluster ([cluster]): an Erda server ({@link RequestServer}) whose PUTs are decided by the shard map
 * ({@link Replication}), registered in ZooKeeper as the ephemeral {@code /servers/ID}, and a candidate in the
 * {@code /coordinator} leader latch. The leader ({@link Coordinator}; one at a time, Curator's {@link LeaderLatch})
 * writes the map: the first one once {@code initialServers} servers are registered, then, whenever membership
 * changes, {@link ShardMap#reconcile}: a gone server's shards promote their full backups, and every shard without a
 * backup gets a live server as a {@code FILLING} one, which its primary fills while serving ({@link PrimaryShard})
 * and then marks full. Both writes are compare-and-sets on the map's znode version, so a deposed leader's late
 * write fails. A server serves a role only while the map names it with the session of its own registration: a
 * restarted server is a new one, refused until the map drops its old self, and reused as a filling backup (its old
 * keys of the shard deleted first, {@link BackupShard}). The exception: a lost shard's last primary back on the same
 * store (its {@link StoreIdentity}, published in its registration) is made that shard's primary again; its store was
 * recovered from its files when it opened, as on any restart. So a whole cluster restarted on its files serves every
 * shard again.
 *
 * <p>A member whose own session is lost halts at once ({@link ConnectionState#LOST}): the others may already have
 * promoted its backups, and it must not go on answering PUTs as a primary.
 *
 * <p>A promoted backup needs no restart: its store already holds every acknowledged object of the shard (the
 * clients WROTE there before their PUT returned), and the reservations its primary made on it and no client
 * completed are settled by its own lease validator, as any lease ([leases]).
 *
 * <p>This class assembles a member, starts, registers and closes it. Its parts: what it answers to each PUT
 * ({@link MemberReplication}), the control plane ({@link Coordinator}), each shard as its primary sees it
 * ({@link PrimaryShard}, filling a backup: {@link BackupFill}) and as its backup does ({@link BackupShard}), and the
 * connections to the other members ({@link Peers}). They read the member's state as it runs through
 * {@link MemberState}.
 */
public final class ClusterServer implements Replication, AutoCloseable {
    /** The member's logger, which its parts log to as well. */
    private static final Logger LOG = Logger.getLogger(ClusterServer.class.getName());

    private final URI zkUri;
    private final int id;
    private final int shards;
    private final int initialServers;
    private final int sessionTimeoutMillis;
    private final ServerConfig config;
    private final java.time.Duration memberLease;
    /** The cluster's ZooKeeper secret, or null for an open cluster ({@link ZkSecret}). */
    private final ZkSecret secret;
    /** Signs the replica reservations this member forwards and checks those it receives ({@link ReplicaTags}). */
    private final ReplicaTags tags;
    private MemberLease lease;
    /** What the member's parts read of it as it runs ({@link State}). */
    private final MemberState member = new State();
    private final Peers peers = new Peers(member::view);
    private final PrimaryShard[] primaryShards;
    private final BackupShard[] backupShards;
    private final MemberReplication replication;
    private Coordinator coordinator;
    private CuratorFramework zk;
    private ClusterView view;
    private LeaderLatch latch;
    private RequestServer server;
    /** Where the other members watch this process end ({@link DeathWatch}). */
    private LivenessPort liveness;
    /** The session of this server's registration: the map must name it with this one for it to serve a role. */
    private volatile long session;
    /** The identity of this server's store ({@link StoreIdentity}), published in its registration. */
    private String store;
    private volatile boolean closed;

    public ClusterServer(URI zkUri, int id, int shards, int initialServers, int sessionTimeoutMillis, ServerConfig config) {
        this(zkUri, id, shards, initialServers, sessionTimeoutMillis, DEFAULT_MEMBER_LEASE, null, config);
    }

    /** How long a member holds its roles without renewing its lease ({@link MemberLease}) unless told otherwise. */
    public static final java.time.Duration DEFAULT_MEMBER_LEASE = java.time.Duration.ofMillis(400);

    /**
     * A member's reservation lease unless told otherwise: half a lone server's, so that a key whose PUT was in flight
     * when its primary died is writable again on the promoted backup half a second sooner; a client whose WRITEs
     * outlive it PUTs again ([leases]). Not shorter: the lease runs from the client's request, so it also covers the
     * PUT's wait in its shard's queue, behind a fill's copies on a member just restarted (at 250 ms, replicated PUTs
     * on a whole cluster restarted with cold JVMs outlived it four times in a row).
     */
    public static final java.time.Duration DEFAULT_RESERVATION_LEASE = java.time.Duration.ofMillis(500);

    public ClusterServer(URI zkUri, int id, int shards, int initialServers, int sessionTimeoutMillis,
                         java.time.Duration memberLease, ZkSecret secret, ServerConfig config) {
        if (id < 0) {
            throw new IllegalArgumentException("server id " + id + " is negative");
        }
        if (shards < 1 || Integer.bitCount(shards) != 1 || shards > 4096) {
            throw new IllegalArgumentException("shard count " + shards + " is not a power of two in [1, 4096]");
        }
        if (initialServers < 1) {
            throw new IllegalArgumentException("initial servers " + initialServers + " < 1");
        }
        this.zkUri = zkUri;
        this.id = id;
        this.shards = shards;
        this.initialServers = initialServers;
        this.sessionTimeoutMillis = sessionTimeoutMillis;
        this.memberLease = memberLease;
        this.secret = secret;
        this.tags = new ReplicaTags(secret);
        this.config = config;
        this.primaryShards = new PrimaryShard[shards];
        this.backupShards = new BackupShard[shards];
        for (int s = 0; s < shards; s++) {
            primaryShards[s] = new PrimaryShard(s, member, peers, tags);
            backupShards[s] = new BackupShard(s, member);
        }
        this.replication = new MemberReplication(member, tags, primaryShards, backupShards);
    }

    /** Starts the store and its server, then joins the cluster; returns once registered. */
    public ClusterServer start() throws Exception {
        zk = Zk.connect(zkUri, sessionTimeoutMillis, secret);
        if (secret != null) {
            secret.lock(zk);
        } else {
            LOG.warning(() -> "server " + id + ": no ZooKeeper secret (--zk-secret-file, " + ZkSecret.ENVIRONMENT
                    + "): the cluster's map and registrations are writable by any ZooKeeper client");
        }
        zk.getConnectionStateListenable().addListener((client, state) -> {
            if (state == ConnectionState.LOST) {
                System.err.println("erda-cluster-server " + id + ": ZooKeeper session lost; halting (its shards fail over)");
                Runtime.getRuntime().halt(3);
            }
        });
        view = new ClusterView(zk).start();
        view.onChange(replication::mapChanged);
        view.onChange(this::dropGonePeers);
        view.onChange(() -> BackupShard.purgeForNewFills(backupShards, member));
        boolean existed = io.erda.core.PmDirectory.exists(config.directory());
        server = RequestServer.start(config, this); // recovers a store opened from its files, as any restart
        server.startCleaning(); // each member cleans its own log, as a single server does ([cleaning])
        store = StoreIdentity.establish(config.directory(), existed);
        LOG.info(() -> "server " + id + ": store " + store + (existed ? ", opened from its files" : ", new"));
        register();
        lease = new MemberLease(zk, id, memberLease, () -> {
            System.err.println("erda-cluster-server " + id + ": lease of " + memberLease.toMillis() + " ms not renewed; "
                    + "halting (its shards fail over; restarted, it joins as a new member)");
            Runtime.getRuntime().halt(3);
        }).start();
        LeaseWatch leaseWatch = new LeaseWatch(zk);
        latch = new LeaderLatch(zk, Zk.COORDINATOR, String.valueOf(id));
        latch.start();
        coordinator = new Coordinator(zk, id, shards, initialServers, lease, leaseWatch, latch).start();
        view.onChange(coordinator::reconcileSoon);
        return this;
    }

    /**
     * The ephemeral registration (the fabric URI and the store's identity); a previous session of the same id (a
     * restart before it expired) is waited out. The member knows its session before the registration exists: the
     * coordinator may name it in a map within a round trip of the create, and the view's listeners, which follow a map
     * only where it names this member with its own session, must not take that map for one naming someone else (a
     * member restarted as the last primary of lost shards then never started filling their backups unless a PUT came:
     * a nemesis run waited 120 s with every shard {@code FILLING}). The registration is this session's ephemeral node;
     * a create that Curator retried after a lost connection finds its own node, not another server's.
     */
    private void register() throws Exception {
        session = zk.getZookeeperClient().getZooKeeper().getSessionId();
        liveness = new LivenessPort(server.uri(), session);
        byte[] uri = Zk.registration(server.uri(), store, liveness.address());
        long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(2L * sessionTimeoutMillis + 5000);
        while (true) {
            try {
                zk.create().creatingParentContainersIfNeeded().withMode(CreateMode.EPHEMERAL).forPath(Zk.server(id), uri);
            } catch (KeeperException.NodeExistsException e) {
                if (registeredBy(session)) {
                    return; // a retried create: the first attempt made it
                }
                if (System.nanoTime() > deadline) {
                    throw new IllegalStateException("server id " + id + " is registered by another live server", e);
                }
                Thread.sleep(100);
                continue;
            } catch (KeeperException.NoAuthException e) {
                throw new IllegalArgumentException("ZooKeeper refused to register server " + id + ": the cluster is "
                        + "protected by a secret this member does not have (--zk-secret-file, " + ZkSecret.ENVIRONMENT
                        + ")", e);
            }
            if (!registeredBy(session)) {
                // the session expired between the two (the LOST listener halts the process); never serve under another
                throw new IllegalStateException("server " + id + ": its registration does not belong to its session 0x"
                        + Long.toHexString(session));
            }
            return;
        }
    }

    /** Whether this server's registration node exists and is {@code owner}'s ephemeral node. */
    private boolean registeredBy(long owner) throws Exception {
        org.apache.zookeeper.data.Stat stat = zk.checkExists().forPath(Zk.server(id));
        return stat != null && stat.getEphemeralOwner() == owner;
    }

    /** The session of this server's registration (0 before {@link #start}). */
    long session() {
        return session;
    }

    public URI uri() {
        return server.uri();
    }

    public int id() {
        return id;
    }

    /** The identity of this server's store ({@link StoreIdentity}). */
    public String store() {
        return store;
    }

    public RequestServer server() {
        return server;
    }

    /** Decided from the shard map ({@link MemberReplication}). */
    @Override
    public Backup backupFor(Key key, PutRequest request) {
        return replication.backupFor(key, request);
    }

    /** On a map change: the clients of members gone are dropped, and each shard's primary side follows the map. */
    private void dropGonePeers() {
        peers.dropGone();
        for (PrimaryShard shard : primaryShards) {
            shard.resync();
        }
    }

    @Override
    public void close() {
        closed = true;
        if (coordinator != null) {
            coordinator.close();
        }
        if (lease != null) {
            lease.close();
        }
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
        peers.close();
        for (PrimaryShard shard : primaryShards) {
            shard.close();
        }
        if (server != null) {
            server.close();
        }
        if (liveness != null) {
            liveness.close(); // last: the watchers count this member gone; it no longer serves
        }
    }

    /** The member's fields as its parts read them ({@link MemberState}): at each use, never a copy. */
    private final class State implements MemberState {
        @Override
        public int id() {
            return id;
        }

        @Override
        public int shards() {
            return shards;
        }

        @Override
        public long session() {
            return session;
        }

        @Override
        public MemberLease lease() {
            return lease;
        }

        @Override
        public boolean closed() {
            return closed;
        }

        @Override
        public ClusterView view() {
            return view;
        }

        @Override
        public RequestServer server() {
            return server;
        }

        @Override
        public CuratorFramework zk() {
            return zk;
        }
    }
}
