package io.erda.cluster;

import io.erda.cluster.client.Zk;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.concurrent.locks.LockSupport;
import java.util.logging.Level;
import java.util.logging.Logger;
import org.apache.curator.framework.CuratorFramework;
import org.apache.zookeeper.CreateMode;

/**
 * A member's lease on its roles ([cluster], "Failover"): the member renews it by writing its ephemeral
 * {@code /leases/ID} in ZooKeeper every {@link #renewEvery()}; a renewal counts from the moment it was sent. A member
 * whose lease has run out ({@code duration} since the last renewal that succeeded was sent) halts at once, before it
 * could renew again: it may already have been declared gone and its shards promoted ({@link LeaseWatch}), and a member
 * the map dropped must come back as a new incarnation (a new ZooKeeper session), never as its old self. A lease is
 * checked by a renewal thread and by a watchdog, so a renewal stuck in ZooKeeper's client does not keep it alive.
 *
 * <p>The node's data says how long the lease is ({@code lease-ms N}), so the coordinator judges each member by its
 * own lease.
 */
final class MemberLease implements AutoCloseable {
    private static final Logger LOG = Logger.getLogger(MemberLease.class.getName());
    private static final String PREFIX = "lease-ms ";

    private final CuratorFramework zk;
    private final int id;
    private final Duration duration;
    private final Runnable expired;
    private volatile long renewedAt;
    private volatile boolean closed;
    private Thread renewer;
    private Thread watchdog;

    /** {@code expired} runs (once, from either thread) when the lease runs out; it must not return (it halts). */
    MemberLease(CuratorFramework zk, int id, Duration duration, Runnable expired) {
        if (duration.toMillis() < 50) {
            throw new IllegalArgumentException("member lease " + duration.toMillis() + " ms is shorter than 50 ms");
        }
        this.zk = zk;
        this.id = id;
        this.duration = duration;
        this.expired = expired;
    }

    /** A renewal every quarter lease: three may fail or be late before the lease runs out. */
    Duration renewEvery() {
        return duration.dividedBy(4);
    }

    /** Creates the lease node (this session's) and starts renewing; the lease runs from the creation's send. */
    MemberLease start() throws Exception {
        long sent = System.nanoTime();
        zk.create().creatingParentContainersIfNeeded().withMode(CreateMode.EPHEMERAL).forPath(Zk.lease(id), data());
        renewedAt = sent;
        renewer = Thread.ofPlatform().daemon().name("erda-member-lease").start(this::renew);
        watchdog = Thread.ofPlatform().daemon().name("erda-member-lease-watchdog").start(this::watch);
        return this;
    }

    private byte[] data() {
        return (PREFIX + duration.toMillis() + "\n").getBytes(StandardCharsets.UTF_8);
    }

    /** The lease length a lease node's data gives, or {@code fallback} for data without one. */
    static Duration durationOf(byte[] data, Duration fallback) {
        String text = data == null ? "" : new String(data, StandardCharsets.UTF_8).strip();
        if (text.startsWith(PREFIX)) {
            try {
                return Duration.ofMillis(Long.parseLong(text.substring(PREFIX.length()).strip()));
            } catch (NumberFormatException e) {
                return fallback;
            }
        }
        return fallback;
    }

    /** Whether the lease is held now. */
    boolean valid() {
        return System.nanoTime() - renewedAt < duration.toNanos();
    }

    private void checkHeld() {
        if (!closed && !valid()) {
            expired.run();
        }
    }

    private void renew() {
        long period = renewEvery().toNanos();
        while (!closed) {
            checkHeld(); // never renew a lease that ran out: the member may be gone from the map already
            long sent = System.nanoTime();
            try {
                zk.setData().forPath(Zk.lease(id), data());
                renewedAt = sent;
            } catch (Exception e) {
                if (!closed) {
                    LOG.log(Level.FINE, "member " + id + ": lease renewal failed", e);
                }
            }
            LockSupport.parkNanos(Math.max(0, period - (System.nanoTime() - sent)));
        }
    }

    private void watch() {
        long tick = Math.max(1_000_000, duration.toNanos() / 50);
        while (!closed) {
            checkHeld();
            LockSupport.parkNanos(tick);
        }
    }

    @Override
    public void close() {
        closed = true;
        if (renewer != null) {
            renewer.interrupt();
            watchdog.interrupt();
        }
    }
}
