package io.erda.cluster;

import io.erda.cluster.client.MapLease;
import io.erda.cluster.client.Zk;
import java.time.Duration;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.apache.curator.framework.CuratorFramework;
import org.apache.zookeeper.KeeperException;
import org.apache.zookeeper.data.Stat;

/**
 * The coordinator's view of the members' leases ({@link MemberLease}). A member's lease has surely run out once its
 * lease node has not changed for its lease, stretched by the clock-drift bound {@link MapLease#DRIFT} plus a margin,
 * on the coordinator's own monotonic clock since it saw the node change ({@link #expiry}): its last renewal that
 * succeeded was sent before the coordinator saw it, so by then the member has halted, or is paused and halts before
 * it can renew or serve again. The coordinator declares it gone (and promotes its backups) a client map lease
 * ({@link MapLease#DURATION}) sooner ({@link #declaredAfter}): a member promoted acknowledges no PUT until
 * {@link MapLease#promotionWaitNanos()} (longer than that) after it learns the map, so the old holder's lease has
 * still run out before its successor acknowledges anything, and failover does not pay both waits one after the other.
 * A coordinator just elected knows nothing of earlier renewals and counts from its own first look, so it never
 * declares a lease expired sooner than a full lease after taking over. An expired session stays expired (its
 * registration lingers until ZooKeeper ends the session, the member having halted).
 */
final class LeaseWatch {
    static final Duration MARGIN = Duration.ofMillis(20);

    private record Seen(long session, int version, long changedAt, Duration lease) {
    }

    private final CuratorFramework zk;
    private final Map<Integer, Seen> seen = new HashMap<>();
    private final Set<Long> expiredSessions = new HashSet<>();

    LeaseWatch(CuratorFramework zk) {
        this.zk = zk;
    }

    /** Looks at every lease node; returns the sessions whose lease expired (now or before). */
    synchronized Set<Long> poll() throws Exception {
        long now = System.nanoTime();
        List<String> children;
        try {
            children = zk.getChildren().forPath(Zk.LEASES);
        } catch (KeeperException.NoNodeException none) {
            children = List.of();
        }
        Set<Integer> present = new HashSet<>();
        for (String child : children) {
            int member;
            try {
                member = Integer.parseInt(child);
            } catch (NumberFormatException e) {
                continue;
            }
            Stat stat = new Stat();
            byte[] data;
            try {
                data = zk.getData().storingStatIn(stat).forPath(Zk.LEASES + "/" + child);
            } catch (KeeperException.NoNodeException gone) {
                continue;
            }
            present.add(member);
            Seen before = seen.get(member);
            Duration lease = MemberLease.durationOf(data, Duration.ofSeconds(1));
            if (before == null || before.session() != stat.getEphemeralOwner() || before.version() != stat.getVersion()) {
                // counted from when the change was read, not from the poll's start: the renewal may have been sent
                // after the poll began, and its member's lease runs from that send
                seen.put(member, new Seen(stat.getEphemeralOwner(), stat.getVersion(), System.nanoTime(), lease));
            } else if (now - before.changedAt() > declaredAfter(before.lease()).toNanos()) {
                expiredSessions.add(before.session());
            }
        }
        seen.keySet().retainAll(present);
        return Set.copyOf(expiredSessions);
    }

    /** How long after its lease node last changed a member has surely halted (or halts before it serves again). */
    static Duration expiry(Duration lease) {
        return Duration.ofNanos((long) (lease.toNanos() * (1 + MapLease.DRIFT))).plus(MARGIN);
    }

    /**
     * How long a lease node must stand still before its member counts as gone: its {@link #expiry} less a client map
     * lease, which every successor waits out (and more) before it acknowledges a PUT; never less than the lease.
     */
    static Duration declaredAfter(Duration lease) {
        Duration early = expiry(lease).minus(MapLease.DURATION);
        return early.compareTo(lease) < 0 ? lease : early;
    }
}
