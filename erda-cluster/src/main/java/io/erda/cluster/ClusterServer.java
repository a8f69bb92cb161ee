package io.erda.cluster;

import io.erda.client.ClientOptions;
import io.erda.client.ErdaClient;
import io.erda.cluster.client.ClusterView;
import io.erda.cluster.client.DetachedClose;
import io.erda.cluster.client.MapLease;
import io.erda.cluster.client.ShardMap;
import io.erda.cluster.client.Zk;
import io.erda.cluster.client.ZkSecret;
import io.erda.core.hash.Key;
import io.erda.protocol.PutReply;
import io.erda.protocol.PutRequest;
import io.erda.protocol.ReplicaSender;
import io.erda.protocol.WireStatus;
import io.erda.server.Replication;
import io.erda.server.RequestException;
import io.erda.server.RequestServer;
import io.erda.server.ServerConfig;
import java.net.URI;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
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
 * {@code /coordinator} leader latch. The leader ({@link Coordinator}; one at a time, Curator's {@link LeaderLatch})
 * writes the map: the first one once {@code initialServers} servers are registered, then, whenever membership
 * changes, {@link ShardMap#reconcile}: a gone server's shards promote their full backups, and every shard without a backup gets a
 * live server as a {@code FILLING} one, which its primary fills while serving ({@link PrimaryShard}) and then marks
 * full. Both writes are compare-and-sets on the map's znode version, so a deposed leader's late write fails. A
 * server serves a role only while the map names it with the session of its own registration: a restarted server is
 * a new one, refused until the map drops its old self, and reused as a filling backup (its old keys of the shard
 * deleted first, {@link BackupShard}). The exception: a lost shard's last primary back on the same store (its
 * {@link StoreIdentity}, published in its registration) is made that shard's primary again; its store was recovered
 * from its files when it opened, as on any restart. So a whole cluster restarted on its files serves every shard again.
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
    private final Map<Integer, Peer> peers = new ConcurrentHashMap<>();
    private final PrimaryShard[] primaryShards;
    private final BackupShard[] backupShards;
    /** When PUTs of a shard newly led here may be acknowledged: after clients' map leases ran out ({@link MapLease}). */
    private final PrimaryTenure tenure;
    private Coordinator coordinator;
    private CuratorFramework zk;
    private ClusterView view;
    private LeaderLatch latch;
    private RequestServer server;
    /** The session of this server's registration: the map must name it with this one for it to serve a role. */
    private volatile long session;
    /** The identity of this server's store ({@link StoreIdentity}), published in its registration. */
    private String store;
    private volatile boolean closed;

    public ClusterServer(URI zkUri, int id, int shards, int initialServers, int sessionTimeoutMillis, ServerConfig config) {
        this(zkUri, id, shards, initialServers, sessionTimeoutMillis, DEFAULT_MEMBER_LEASE, null, config);
    }

    /** How long a member holds its roles without renewing its lease ({@link MemberLease}) unless told otherwise. */
    public static final java.time.Duration DEFAULT_MEMBER_LEASE = java.time.Duration.ofMillis(300);

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
        this.tenure = new PrimaryTenure(id, shards, MapLease.promotionWaitNanos());
        for (int s = 0; s < shards; s++) {
            primaryShards[s] = new PrimaryShard(s);
            backupShards[s] = new BackupShard(s);
        }
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
        view.onChange(() -> tenure.observe(view.map(), session));
        view.onChange(this::dropGonePeers);
        view.onChange(this::purgeForNewFills);
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
     * restart before it expired) is waited out.
     */
    private void register() throws Exception {
        byte[] uri = Zk.registration(server.uri(), store);
        long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(2L * sessionTimeoutMillis + 5000);
        while (true) {
            try {
                zk.create().creatingParentContainersIfNeeded().withMode(CreateMode.EPHEMERAL).forPath(Zk.server(id), uri);
                session = zk.checkExists().forPath(Zk.server(id)).getEphemeralOwner();
                return;
            } catch (KeeperException.NodeExistsException e) {
                if (System.nanoTime() > deadline) {
                    throw new IllegalStateException("server id " + id + " is registered by another live server", e);
                }
                Thread.sleep(100);
            } catch (KeeperException.NoAuthException e) {
                throw new IllegalArgumentException("ZooKeeper refused to register server " + id + ": the cluster is "
                        + "protected by a secret this member does not have (--zk-secret-file, " + ZkSecret.ENVIRONMENT
                        + ")", e);
            }
        }
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

    // ------------------------------------------------------------------ Replication

    @Override
    public Backup backupFor(Key key, PutRequest request) {
        boolean replica = request.replica();
        int assignment = request.assignment();
        ShardMap map = view.map();
        if (map == null) {
            throw new RequestException(WireStatus.NOT_PRIMARY, "server " + id + " has no shard map yet");
        }
        int shard = map.shardOf(key.hash());
        if (lease != null && !lease.valid()) {
            throw new RequestException(WireStatus.NOT_PRIMARY, "server " + id + " has not renewed its lease; it serves "
                    + "no role");
        }
        boolean named = map.names(id, session) && map.state(shard) != ShardMap.State.LOST;
        if (replica) {
            if (map.backup(shard) != id || !named) {
                throw new RequestException(WireStatus.NOT_PRIMARY, "server " + id + " is not the backup of shard " + shard
                        + " in map epoch " + map.epoch());
            }
            if (map.backupSince(shard) != assignment) {
                // one of the two acts on an older map: the purge below must not run after copies it would delete
                throw new RequestException(WireStatus.NOT_PRIMARY, "server " + id + " is the backup of shard " + shard
                        + " by map epoch " + map.backupSince(shard) + ", not " + assignment + " (map epoch "
                        + map.epoch() + ")");
            }
            ReplicaSender sender = request.sender();
            if (!tags.verify(request)) {
                LOG.warning(() -> "server " + id + ": refused a replica reservation of shard " + shard + " claiming "
                        + "session 0x" + Long.toHexString(sender.session()) + ": its tag is wrong (the sender does not "
                        + "have the cluster's secret)");
                throw new RequestException(WireStatus.NOT_AUTHORIZED, "server " + id + " refuses a replica reservation"
                        + " of shard " + shard + ": its sender's tag is wrong (it does not have the cluster's secret)");
            }
            long primarySession = map.session(map.primary(shard));
            if (sender.session() != primarySession) {
                // a deposed primary acting on an older map, or a process that is no member at all
                throw new RequestException(WireStatus.NOT_PRIMARY, "server " + id + " takes replica reservations of "
                        + "shard " + shard + " only from its primary, server " + map.primary(shard) + " (session 0x"
                        + Long.toHexString(primarySession) + ", map epoch " + map.epoch() + "), not from session 0x"
                        + Long.toHexString(sender.session()));
            }
            if (map.state(shard) == ShardMap.State.FILLING) {
                backupShards[shard].purgeFor(map.session(map.primary(shard)), map.backupSince(shard));
            }
            return null;
        }
        if (map.primary(shard) != id || !named) {
            throw new RequestException(WireStatus.NOT_PRIMARY, "server " + id + " is not the primary of shard " + shard
                    + " in map epoch " + map.epoch() + " (server " + map.primary(shard) + " is, shard "
                    + map.state(shard).text() + ")");
        }
        tenure.observe(map, session);
        long wait = tenure.remainingNanos(shard);
        if (wait > 0) {
            // a client whose map still names the previous primary may still read there: refused, the client retries
            throw new RequestException(WireStatus.NOT_PRIMARY, "server " + id + " became primary of shard " + shard
                    + " in map epoch " + map.epoch() + "; it acknowledges PUTs once clients' map leases ("
                    + MapLease.DURATION.toMillis() + " ms) have run out, in " + (wait / 1_000_000 + 1) + " ms");
        }
        return new ShardTask(primaryShards[shard]);
    }

    /**
     * One PUT's side of {@link PrimaryShard}: which backup (if any) its reservation went to is decided in the shard's
     * ordered task, from the shard's state then, so a backup assigned or dropped meanwhile is seen in order.
     */
    private static final class ShardTask implements Backup {
        private final PrimaryShard shard;
        private int server = ShardMap.NONE;

        ShardTask(PrimaryShard shard) {
            this.shard = shard;
        }

        @Override
        public int server() {
            return server;
        }

        @Override
        public java.util.concurrent.Executor ordered() {
            return shard.ordered;
        }

        @Override
        public void prepare(PutRequest request) {
            shard.prepare(request.key());
        }

        @Override
        public PutReply reserve(PutRequest request) {
            server = shard.backup;
            return shard.forward(request);
        }
    }

    /**
     * A shard as its primary sees it. Every PUT of the shard here, replicated or not, is a task of the shard's
     * single-thread executor (so both copies see a key's PUTs in one order, and a change of backup falls between two
     * PUTs); {@link #sync} brings the state in line with the map at the start of each task.
     *
     * <p><b>Filling a new backup</b> ([cluster]). From the task that first sees the shard's backup {@code FILLING}
     * (time T), every reservation is forwarded to it. Before a key's first reservation is forwarded, the key's newest
     * complete value is copied to the backup (reserved and written by this server, synchronously, in the same task),
     * so the backup's entry holds the key's older version under the forwarded one and a client that dies between its
     * two WRITEs rolls both copies back alike. Meanwhile a fill thread waits a lease past T (every reservation made
     * before T is then written or past its deadline), lists the shard's keys and, in tasks of a few keys each, copies
     * every key not yet copied or forwarded; a key touched since T is never copied again, so a copy never lands over a
     * forwarded version. A key's copy also waits until its reservations from before T are complete or settled
     * ({@link io.erda.server.Store#settledBefore}); a PUT that would copy such a key first is refused meanwhile (its
     * client tries again), so one key does not hold up the shard's other PUTs. Then it marks the backup full in the map (compare-and-set).
     */
    private final class PrimaryShard {
        final int shard;
        final java.util.concurrent.Executor ordered;
        private final ExecutorService thread;
        // fields below: written only in the shard's tasks
        int backup = ShardMap.NONE;
        long backupSession;
        /** The map epoch that assigned the backup ({@link ShardMap#backupSince}): a new assignment is a new fill. */
        long backupSince;
        /** The map says the shard is lost: no PUT of it is acknowledged here, whatever the map said when it was queued. */
        boolean lost;
        /** The fill under way, or null; volatile so a fill thread can see it was superseded between tasks. */
        volatile Fill fill;

        PrimaryShard(int shard) {
            this.shard = shard;
            this.thread = Executors.newSingleThreadExecutor(Thread.ofPlatform().daemon().name("erda-shard-" + shard).factory());
            this.ordered = task -> thread.execute(() -> {
                sync();
                task.run();
            });
        }

        /**
         * In a task: follows the map's backup for this shard; starts a fill when it names a new filling backup. A map
         * that names this id under another session speaks of an earlier incarnation and is ignored; a lost shard has
         * no backup here, so the filling backup the shard gets once it is re-adopted is a new one even if it is the
         * same server (with the same session) as before the shard was lost.
         */
        void sync() {
            ShardMap map = view.map();
            if (map == null || map.primary(shard) != id || !map.names(id, session)) {
                return;
            }
            lost = map.state(shard) == ShardMap.State.LOST;
            if (lost) {
                backup = ShardMap.NONE;
                backupSession = 0;
                fill = null;
                return;
            }
            int b = map.backup(shard);
            long bSession = b == ShardMap.NONE ? 0 : map.session(b);
            long since = map.backupSince(shard);
            if (b != backup || bSession != backupSession || since != backupSince) {
                backup = b;
                backupSession = bSession;
                backupSince = since;
                fill = null;
                if (b != ShardMap.NONE && map.state(shard) == ShardMap.State.FILLING) {
                    fill = new Fill(this, b, bSession, since, System.nanoTime());
                    Thread.ofVirtual().name("erda-fill-" + shard).start(fill::run);
                }
            } else if (fill != null && map.state(shard) == ShardMap.State.FULL) {
                fill = null;
            }
        }

        /**
         * In a task, before the PUT reserves anything here: a backup being filled gets the key's older value first
         * ({@link Fill#copyFirst}); refused while that value is not yet known.
         */
        void prepare(java.lang.foreign.MemorySegment key) {
            if (lost) {
                throw new RequestException(WireStatus.NOT_PRIMARY, "shard " + shard + " is lost");
            }
            Fill f = fill;
            if (backup == ShardMap.NONE || f == null) {
                return;
            }
            try {
                f.copyFirst(key);
            } catch (RequestException refused) {
                throw refused;
            } catch (RuntimeException e) {
                throw backupFailed(e);
            }
        }

        /** In a task: the backup's reservation for a PUT already reserved here, or null when the shard has no backup. */
        PutReply forward(PutRequest request) {
            if (lost) {
                throw new RequestException(WireStatus.NOT_PRIMARY, "shard " + shard + " is lost");
            }
            if (backup == ShardMap.NONE) {
                return null;
            }
            try {
                int assignment = Math.toIntExact(backupSince);
                return peer(backup).reserveReplica(request.key(), request.valueLength(), request.delete(), assignment,
                        tags.sign(session, request.key(), request.valueLength(), request.delete(), assignment));
            } catch (RuntimeException e) {
                throw backupFailed(e);
            }
        }

        private RequestException backupFailed(RuntimeException e) {
            peerFailed(backup, e);
            return new RequestException(WireStatus.BACKUP_UNAVAILABLE, "shard " + shard + ": backup server " + backup
                    + " did not reserve: " + e.getMessage());
        }

        /** Sends {@code ordered} a task and waits for it. */
        void inTask(Runnable task) throws Exception {
            java.util.concurrent.CompletableFuture<Void> done = new java.util.concurrent.CompletableFuture<>();
            ordered.execute(() -> {
                try {
                    task.run();
                    done.complete(null);
                } catch (Throwable t) {
                    done.completeExceptionally(t);
                }
            });
            done.get();
        }
    }

    /** One fill of one backup of one shard ({@link PrimaryShard}). */
    private final class Fill {
        /** Few: a PUT of the shard queued behind a task of copies waits for all of them, within its lease. */
        private static final int KEYS_PER_TASK = 4;
        private static final long FIRST_BACKOFF_MILLIS = 100;
        private static final long MAX_BACKOFF_MILLIS = 5000;
        private final PrimaryShard shard;
        private final int backup;
        private final long backupSession;
        private final long backupSince;
        private final long startNanos;
        /** Keys copied or forwarded since the fill began; only in the shard's tasks. */
        private final Set<MemorySegmentKey> touched = new java.util.HashSet<>();
        private long copied;

        Fill(PrimaryShard shard, int backup, long backupSession, long backupSince, long startNanos) {
            this.shard = shard;
            this.backup = backup;
            this.backupSession = backupSession;
            this.backupSince = backupSince;
            this.startNanos = startNanos;
        }

        private boolean current() {
            return shard.fill == this;
        }

        /**
         * In a task: before {@code key}'s first forwarded reservation, its older value goes to the backup. While a
         * reservation of the key from before the fill is open (a PUT through the previous primary, when this server was
         * just promoted, may still complete it within its lease) that value is not known yet: the PUT is refused and
         * its client tries again, instead of holding up the shard's task, and with it every other key's PUT of the
         * shard, for up to a lease.
         */
        void copyFirst(java.lang.foreign.MemorySegment key) {
            byte[] bytes = key.toArray(java.lang.foreign.ValueLayout.JAVA_BYTE);
            if (touched.contains(new MemorySegmentKey(bytes))) {
                return;
            }
            if (!server.store().settledBefore(key, startNanos) && System.nanoTime() < giveUpNanos()) {
                throw new RequestException(WireStatus.BACKUP_UNAVAILABLE, "shard " + shard.shard + ": the key's "
                        + "reservation from before backup " + backup + " began to be filled is still open (a lease is "
                        + server.store().leaseNanos() / 1_000_000 + " ms); its older value is copied once it settles");
            }
            copy(bytes);
        }

        /** Past this, a key's copy waits no more for its reservations from before the fill (a guard: they settle first). */
        private long giveUpNanos() {
            return startNanos + 3 * server.store().leaseNanos();
        }

        /** In a task: copies {@code key}'s newest complete value (if it has one) to the backup, synchronously. */
        private void copy(byte[] key) {
            java.lang.foreign.MemorySegment k = java.lang.foreign.MemorySegment.ofArray(key);
            while (!server.store().settledBefore(k, startNanos) && System.nanoTime() < giveUpNanos()) {
                java.util.concurrent.locks.LockSupport.parkNanos(200_000);
            }
            byte[] value = server.store().get(k);
            if (value != null) {
                java.lang.foreign.MemorySegment v = java.lang.foreign.MemorySegment.ofArray(value);
                java.lang.foreign.MemorySegment object = java.lang.foreign.MemorySegment.ofArray(
                        new byte[(int) io.erda.core.layout.ObjectLayout.align(io.erda.core.layout.ObjectLayout.HEADER_LENGTH
                                + key.length + value.length)]);
                io.erda.core.layout.ObjectLayout.encode(object, 0, k, v, false);
                ErdaClient to = peer(backup);
                int assignment = Math.toIntExact(backupSince);
                to.writeReserved(to.reserveReplica(k, value.length, false, assignment,
                        tags.sign(session, k, value.length, false, assignment)), object);
                copied++;
            }
            touched.add(new MemorySegmentKey(key));
        }

        /**
         * The fill thread: waits out reservations from before the fill, copies the rest, marks the backup full. Any
         * failure (a copy, listing the keys, ZooKeeper while marking full, anything unexpected) is logged and the fill
         * tried again after a pause that doubles up to {@value #MAX_BACKOFF_MILLIS} ms, until it is done, superseded
         * (the map moved on: another backup, or none) or the server closes. Keys already copied or forwarded are not
         * copied again.
         */
        void run() {
            long backoff = FIRST_BACKOFF_MILLIS;
            for (int attempt = 1; ; attempt++) {
                if (!current() || closed) {
                    return;
                }
                long pause;
                try {
                    if (fillOnce()) {
                        return;
                    }
                    pause = FIRST_BACKOFF_MILLIS; // a copy failed: the map may be moving; tried again shortly
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    return;
                } catch (Exception e) {
                    if (!current() || closed) {
                        return;
                    }
                    pause = backoff;
                    int n = attempt;
                    long ms = pause;
                    LOG.log(Level.WARNING, e, () -> "server " + id + ": fill of shard " + shard.shard + " to server "
                            + backup + " failed (attempt " + n + "); trying again in " + ms + " ms");
                    backoff = Math.min(MAX_BACKOFF_MILLIS, backoff * 2);
                }
                try {
                    Thread.sleep(pause);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    return;
                }
            }
        }

        /**
         * One attempt: true when done (marked full, or superseded), false when a copy failed (the backup's view may lag
         * the map, or it died, and then the map moves on); throws on any other failure.
         */
        private boolean fillOnce() throws Exception {
            long wait = startNanos + server.store().leaseNanos() * 5 / 4 + 50_000_000L - System.nanoTime();
            if (wait > 0) {
                Thread.sleep(wait / 1_000_000, (int) (wait % 1_000_000));
            }
            int shards = primaryShards.length;
            List<byte[]> keys = server.store().keys(hash -> io.erda.core.hash.KeyHash.shard(hash, shards) == shard.shard);
            LOG.info(() -> "server " + id + ": filling backup " + backup + " of shard " + shard.shard + " with up to "
                    + keys.size() + " keys");
            for (int from = 0; from < keys.size(); from += KEYS_PER_TASK) {
                int start = from;
                int end = Math.min(keys.size(), from + KEYS_PER_TASK);
                boolean[] superseded = {false};
                try {
                    shard.inTask(() -> {
                        if (!current()) {
                            superseded[0] = true;
                            return;
                        }
                        for (int i = start; i < end; i++) {
                            if (!touched.contains(new MemorySegmentKey(keys.get(i)))) {
                                copy(keys.get(i));
                            }
                        }
                    });
                } catch (java.util.concurrent.ExecutionException e) {
                    LOG.log(Level.FINE, "fill of shard " + shard.shard + ": copy failed, retrying", e.getCause());
                    peerFailed(backup, e.getCause());
                    return false;
                }
                if (superseded[0]) {
                    return true;
                }
            }
            markFull();
            return true;
        }

        private void markFull() throws Exception {
            while (true) {
                Stat stat = new Stat();
                ShardMap map = ShardMap.decode(zk.getData().storingStatIn(stat).forPath(Zk.MAP));
                int s = shard.shard;
                if (map.primary(s) != id || map.backup(s) != backup || map.session(backup) != backupSession
                        || map.backupSince(s) != backupSince || map.state(s) != ShardMap.State.FILLING) {
                    return; // the map moved on (the backup died, or this server is no longer named)
                }
                try {
                    zk.setData().withVersion(stat.getVersion()).forPath(Zk.MAP, map.withFull(s).encode());
                    long n = copied;
                    LOG.info(() -> "server " + id + ": backup " + backup + " of shard " + s + " is full (" + n
                            + " keys copied)");
                    return;
                } catch (KeeperException.BadVersionException raced) {
                    // read again
                }
            }
        }
    }

    /** A key as a set element. */
    private record MemorySegmentKey(byte[] bytes) {
        @Override
        public boolean equals(Object o) {
            return o instanceof MemorySegmentKey k && java.util.Arrays.equals(k.bytes, bytes);
        }

        @Override
        public int hashCode() {
            return java.util.Arrays.hashCode(bytes);
        }
    }

    /**
     * A shard as its backup sees it: a server made the filling backup of a shard first deletes every key of the
     * shard it holds (a returning server's old files: keys deleted or changed since it left must not come back if it is
     * promoted), before it accepts the first replica reservation of that fill: once per primary's session, so a
     * server filled again by a primary that returned (a lost shard re-adopted, [cluster]) starts clean again. This is
     * the only place a server deletes keys for the cluster, and a lost shard has no backup: its last primary's keys of
     * it stay until the shard is re-adopted.
     */
    private final class BackupShard {
        private final int shard;
        /**
         * The fill this server last purged for: its primary's session (sessions are unique; 0: none) and the map epoch
         * that assigned this server ({@link ShardMap#backupSince}), so a server dropped as the backup and given the role
         * again (rebalancing, or its successor died) purges again, even for the same primary.
         */
        private long purgedFor;
        private long purgedAssignment;

        BackupShard(int shard) {
            this.shard = shard;
        }

        synchronized boolean purgedFor(long primarySession, long assignment) {
            return purgedFor == primarySession && purgedAssignment == assignment;
        }

        synchronized void purgeFor(long primarySession, long assignment) {
            if (purgedFor == primarySession && purgedAssignment == assignment) {
                return;
            }
            int shards = backupShards.length;
            List<byte[]> stale = server.store().keys(hash -> io.erda.core.hash.KeyHash.shard(hash, shards) == shard);
            for (byte[] key : stale) {
                server.store().apply(java.lang.foreign.MemorySegment.ofArray(key), java.lang.foreign.MemorySegment.NULL, true);
            }
            purgedFor = primarySession;
            purgedAssignment = assignment;
            if (!stale.isEmpty()) {
                LOG.info(() -> "server " + id + ": deleted " + stale.size() + " old keys of shard " + shard
                        + " before being filled as its backup");
            }
        }
    }

    private record Peer(URI uri, ErdaClient client) {
    }

    /**
     * On a map change: a shard this server was just made the filling backup of is purged now, in the background,
     * rather than when its primary's first replica reservation arrives; the primary, promoted by the same map, is still
     * waiting out its tenure then, and a purge scans the whole table. {@link #backupFor} purges too (a no-op once done).
     */
    private void purgeForNewFills() {
        ShardMap map = view.map();
        if (map == null || server == null || !map.names(id, session)) {
            return;
        }
        for (int s = 0; s < map.shards(); s++) {
            if (map.backup(s) == id && map.state(s) == ShardMap.State.FILLING) {
                BackupShard shard = backupShards[s];
                long primarySession = map.session(map.primary(s));
                long assignment = map.backupSince(s);
                if (!shard.purgedFor(primarySession, assignment)) {
                    Thread.ofVirtual().name("erda-purge-" + s).start(() -> shard.purgeFor(primarySession, assignment));
                }
            }
        }
    }

    private ErdaClient peer(int server) {
        URI uri = view.server(server);
        if (uri == null) {
            throw new IllegalStateException("server " + server + " is not registered");
        }
        Peer p = peers.get(server);
        if (p != null && p.uri().equals(uri)) {
            return p.client();
        }
        if (p != null) {
            peerFailed(server, null);
        }
        return peers.computeIfAbsent(server, s -> new Peer(uri, ErdaClient.connect(ClientOptions.of(uri).withPoolSize(4))))
                .client();
    }

    /**
     * Forgets the client of a peer whose connection failed (a fabric error) or that left, so the next use reconnects;
     * the old one is closed in the background ({@link DetachedClose}).
     */
    private void peerFailed(int server, Throwable cause) {
        if (cause == null || cause instanceof io.erda.fabric.FabricException) {
            Peer broken = peers.remove(server);
            if (broken != null) {
                DetachedClose.start(broken.client(), "peer-" + server);
            }
        }
    }

    private void dropGonePeers() {
        Map<Integer, URI> live = view.servers();
        for (Map.Entry<Integer, Peer> e : List.copyOf(peers.entrySet())) {
            if (!e.getValue().uri().equals(live.get(e.getKey()))) {
                peerFailed(e.getKey(), null);
            }
        }
        for (PrimaryShard shard : primaryShards) {
            shard.ordered.execute(() -> { }); // a task: sync() starts or stops a fill as the map now says
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
        for (Peer peer : peers.values()) {
            peer.client().close();
        }
        for (PrimaryShard shard : primaryShards) {
            shard.thread.shutdownNow();
        }
        if (server != null) {
            server.close();
        }
    }
}
