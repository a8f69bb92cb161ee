package io.erda.cluster;

import io.erda.cluster.client.ShardMap;
import io.erda.cluster.client.Zk;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.logging.Level;
import java.util.logging.Logger;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.recipes.leader.LeaderLatch;
import org.apache.zookeeper.KeeperException;
import org.apache.zookeeper.data.Stat;

/**
 * A member's part in the control plane ([cluster]), on one thread of its own. Every member is a candidate in the
 * {@code /coordinator} leader latch; the leader (one at a time, Curator's {@link LeaderLatch}) writes the shard map:
 * the first one once {@code initialServers} servers are registered, then, whenever membership changes and every
 * {@value #RECONCILE_MILLIS} ms, {@link ShardMap#reconcile}. Both writes are compare-and-sets on the map's znode
 * version, so a deposed leader's late write fails; a coordinator whose own lease ({@link MemberLease}) is no longer
 * valid writes nothing more. The leader also watches the members' leases ({@link LeaseWatch}): a member whose lease
 * ran out is gone at once, whatever ZooKeeper says of its session; the others watch the leader's, and depose a
 * coordinator whose lease ran out ({@link #watchLeases}). Every member also watches the others' processes
 * ({@link DeathWatch}): one seen to end counts as gone the moment it ends, as if its lease had run out. It logs a
 * shard lost or recovered, and once each, a lost shard's refusal and a bad registration.
 */
final class Coordinator implements AutoCloseable {
    /** The member's logger: a member's lines name {@link ClusterServer} whichever of its parts logs them. */
    private static final Logger LOG = Logger.getLogger(ClusterServer.class.getName());
    private static final long RECONCILE_MILLIS = 200;
    /** How often the coordinator looks at the members' leases ({@link LeaseWatch}). */
    private static final long LEASE_POLL_MILLIS = 20;
    /** A member that does not coordinate looks at the coordinator's lease every this many rounds. */
    private static final int FOLLOWER_LEASE_ROUNDS = 5;

    private final CuratorFramework zk;
    private final int id;
    private final int shards;
    private final int initialServers;
    /** This member's lease: a coordinator that lost it may already have a successor. */
    private final MemberLease lease;
    private final LeaseWatch leaseWatch;
    private final LeaderLatch latch;
    /** Sees the other members' processes end ({@link DeathWatch}). */
    private final DeathWatch deaths;
    private final ScheduledExecutorService thread = Executors.newSingleThreadScheduledExecutor(
            Thread.ofPlatform().name("erda-cluster-coordinator").daemon().factory());
    /** Rounds of {@link #watchLeases} (only the coordinator's thread). */
    private long leaseRounds;
    /**
     * The sessions the coordinator counts gone: their leases expired ({@link LeaseWatch}) or their processes were seen
     * to end ({@link DeathWatch}) (only the coordinator's thread).
     */
    private Set<Long> expiredSessions = Set.of();
    /**
     * Coordinator only: what was logged once (a lost shard's refusal per session of its returned primary, a bad
     * registration per session).
     */
    private final Set<String> refusalsLogged = ConcurrentHashMap.newKeySet();

    /** {@code latch} is started by the member; this only asks it who leads. */
    Coordinator(CuratorFramework zk, int id, int shards, int initialServers, MemberLease lease, LeaseWatch leaseWatch,
                LeaderLatch latch) {
        this.zk = zk;
        this.id = id;
        this.shards = shards;
        this.initialServers = initialServers;
        this.lease = Objects.requireNonNull(lease, "lease");
        this.leaseWatch = leaseWatch;
        this.latch = Objects.requireNonNull(latch, "latch");
        this.deaths = new DeathWatch(id, session -> thread.execute(this::memberEnded));
    }

    /** Starts the rounds: reconciling if leader, and looking at the leases. */
    Coordinator start() {
        thread.scheduleWithFixedDelay(this::reconcileIfLeader, 0, RECONCILE_MILLIS, TimeUnit.MILLISECONDS);
        thread.scheduleWithFixedDelay(this::watchLeases, 0, LEASE_POLL_MILLIS, TimeUnit.MILLISECONDS);
        return this;
    }

    /** On a change of the map or the registrations: a round of reconciling now (if leader), not at the next tick. */
    void reconcileSoon() {
        thread.execute(this::reconcileIfLeader);
    }

    /** Stops the rounds (interrupting one under way). */
    @Override
    public void close() {
        thread.shutdownNow();
        deaths.close();
    }

    /**
     * Every member looks at the leases ({@link LeaseWatch}). The coordinator: a member's lease newly expired makes it
     * gone at once, not at its ZooKeeper session's end. The others (every few rounds): a coordinator whose lease expired
     * has halted or halts before it writes again, so its leader-latch node is deleted and the next member in line takes
     * over now, not at its session's end (every map write is a compare-and-set on what it read, so even a late write of
     * the old one could not undo what the new one wrote).
     */
    private void watchLeases() {
        try {
            if (latch.hasLeadership()) {
                Set<Long> expired = leaseWatch.poll();
                Set<Long> newly = new java.util.HashSet<>(expired);
                newly.removeAll(expiredSessions);
                newly.removeAll(deaths.ended());
                if (!newly.isEmpty()) {
                    LOG.info(() -> "coordinator " + id + ": the lease of session(s) " + newly.stream()
                            .map(s -> "0x" + Long.toHexString(s)).toList() + " ran out; gone");
                }
                goneNow(expired);
            } else if (++leaseRounds % FOLLOWER_LEASE_ROUNDS == 0) {
                registrations(); // keeps the death watch on every member, the coordinator among them
                deposeExpiredCoordinator(union(leaseWatch.poll(), deaths.ended()));
            }
        } catch (Exception e) {
            LOG.log(Level.FINE, "looking at the members' leases failed (next round retries)", e);
        }
    }

    /**
     * A member's process was seen to end ({@link DeathWatch}): the coordinator counts it gone now, as a lease that ran
     * out; the others depose it at once if it was the coordinator.
     */
    private void memberEnded() {
        try {
            if (latch.hasLeadership()) {
                goneNow(expiredSessions);
            } else {
                deposeExpiredCoordinator(deaths.ended());
            }
        } catch (Exception e) {
            LOG.log(Level.FINE, "acting on a member's end failed (the next look at the leases retries)", e);
        }
    }

    /** Coordinator: {@code expired} and the sessions seen to end are gone; reconciles if that changed anything. */
    private void goneNow(Set<Long> expired) throws Exception {
        Set<Long> gone = union(expired, deaths.ended());
        if (!gone.equals(expiredSessions)) {
            expiredSessions = gone;
            reconcile();
        }
    }

    private static Set<Long> union(Set<Long> a, Set<Long> b) {
        Set<Long> all = new java.util.HashSet<>(a);
        all.addAll(b);
        return Set.copyOf(all);
    }

    /** Deletes the leader-latch node of a coordinator whose session's lease expired. */
    private void deposeExpiredCoordinator(Set<Long> expired) throws Exception {
        if (expired.isEmpty()) {
            return;
        }
        List<String> candidates;
        try {
            candidates = zk.getChildren().forPath(Zk.COORDINATOR);
        } catch (KeeperException.NoNodeException none) {
            return;
        }
        // Curator's latch nodes end in a sequence number; the lowest leads
        String leader = candidates.stream().min(java.util.Comparator.comparing(c -> c.substring(c.lastIndexOf('-') + 1)))
                .orElse(null);
        if (leader == null) {
            return;
        }
        String path = Zk.COORDINATOR + "/" + leader;
        Stat stat = zk.checkExists().forPath(path);
        if (stat != null && expired.contains(stat.getEphemeralOwner())) {
            try {
                zk.delete().withVersion(stat.getVersion()).forPath(path);
                LOG.warning(() -> "server " + id + ": the coordinator's lease expired (session 0x"
                        + Long.toHexString(stat.getEphemeralOwner()) + "); its latch node deleted, the next takes over");
            } catch (KeeperException.NoNodeException | KeeperException.BadVersionException gone) {
                // deleted by another member, or its session ended meanwhile
            }
        }
    }

    private void reconcileIfLeader() {
        try {
            if (latch.hasLeadership()) {
                reconcile();
            }
        } catch (Exception e) {
            LOG.log(Level.WARNING, "coordinator: reconciling the shard map failed (next round retries)", e);
        }
    }

    /** A registration as read: its server, the session it was made under, and its data. */
    private record Registered(int member, long session, byte[] data) {
    }

    /**
     * The registrations under {@code /servers}, skipping a node that went while being read; each is given to the
     * {@link DeathWatch} (which stops watching those gone).
     */
    private List<Registered> registrations() throws Exception {
        List<Registered> all = new java.util.ArrayList<>();
        Map<Long, DeathWatch.Target> watched = new java.util.HashMap<>();
        for (String child : zk.getChildren().forPath(Zk.SERVERS)) {
            Stat stat = new Stat();
            byte[] data;
            int member;
            try {
                member = Integer.parseInt(child);
                data = zk.getData().storingStatIn(stat).forPath(Zk.SERVERS + "/" + child);
            } catch (KeeperException.NoNodeException gone) {
                continue;
            } catch (NumberFormatException bad) {
                // as any bad registration: left out (not live), logged once, the coordinator goes on
                if (refusalsLogged.add("registration " + child)) {
                    LOG.severe("coordinator " + id + ": registration " + Zk.SERVERS + "/" + child + " left out: its "
                            + "name is not a server id");
                }
                continue;
            }
            all.add(new Registered(member, stat.getEphemeralOwner(), data));
            java.net.InetSocketAddress alive = Zk.alive(data);
            if (alive != null) {
                watched.put(stat.getEphemeralOwner(), new DeathWatch.Target(member, alive));
            }
        }
        deaths.watch(watched);
        return all;
    }

    /** The registered servers: the sessions of their registrations and their stores' identities. */
    private Map<Integer, ShardMap.Registration> live() throws Exception {
        Map<Integer, ShardMap.Registration> live = new TreeMap<>();
        for (Registered r : registrations()) {
            if (expiredSessions.contains(r.session())) {
                continue; // its lease ran out or its process ended: it halted (or halts before serving again); gone
            }
            try {
                live.put(r.member(), new ShardMap.Registration(r.session(), Zk.store(r.data())));
            } catch (IllegalArgumentException bad) {
                // one bad registration must not stop the coordinator: that server is left out (not live) until fixed
                if (refusalsLogged.add("registration " + r.member() + "@" + r.session())) {
                    LOG.severe("coordinator " + id + ": registration " + Zk.server(r.member()) + " left out: "
                            + bad.getMessage());
                }
            }
        }
        return live;
    }

    private void reconcile() throws Exception {
        if (!lease.valid()) {
            return; // a coordinator that lost its lease may already have a successor: it writes nothing more
        }
        Map<Integer, ShardMap.Registration> live = live();
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
        ShardMap next = current.reconcile(live);
        if (next != current) {
            try {
                zk.setData().withVersion(stat.getVersion()).forPath(Zk.MAP, next.encode());
                LOG.info(() -> "coordinator " + id + ": servers " + live.keySet() + " live; shard map " + next);
                for (int s = 0; s < next.shards(); s++) {
                    int p = next.primary(s);
                    if (next.state(s) == ShardMap.State.LOST && current.state(s) != ShardMap.State.LOST) {
                        int b = current.backup(s);
                        LOG.severe("coordinator " + id + ": shard " + s + " is LOST: its primary " + p + " is gone and "
                                + (b == ShardMap.NONE ? "it had no backup"
                                : current.state(s) == ShardMap.State.FULL ? "its full backup, server " + b + ", too"
                                : "its backup, server " + b + ", was still filling") + "; it returns to service only if "
                                + "server " + p + " comes back on its store " + next.lostStore(s));
                    } else if (next.state(s) != ShardMap.State.LOST && p == current.primary(s)
                            && next.session(p) != current.session(p)) {
                        // a primary kept under a new session: only a lost shard's last primary re-adopted is
                        LOG.warning("coordinator " + id + ": shard " + s + " recovered: its last primary, server " + p
                                + ", is back on its store " + next.store(p) + " (recovered from its files) and is its "
                                + "primary again");
                    }
                }
            } catch (KeeperException.BadVersionException raced) {
                // the map changed since we read it: the next round starts from the new one
                return;
            }
        }
        ShardMap now = next;
        for (int s = 0; s < now.shards(); s++) {
            String why = now.refusal(s, live);
            if (why != null && refusalsLogged.add(s + "@" + live.get(now.primary(s)).session())) {
                LOG.severe("coordinator " + id + ": " + why);
            }
        }
    }
}
