package io.erda.cluster.client;

import java.time.Duration;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.logging.Level;
import java.util.logging.Logger;
import org.apache.curator.framework.CuratorFramework;

/**
 * A client's lease on its shard map ([cluster], "Fencing"): the client routes by a map only while it can confirm it.
 * Every {@link #RENEW_EVERY} a thread notes the time {@code t}, asks ZooKeeper for the map (after a {@code sync}, so
 * the server it talks to has caught up with the leader) and, if the map it routes by is at least as new as the one
 * read, the map is confirmed as of {@code t}: at {@code t} no newer map existed. An operation may start only within
 * {@link #DURATION} of the last confirmation, on this process's monotonic clock; past it, it waits for one and, after
 * the operation timeout, fails naming the shard.
 *
 * <p>The other half is on the members: a member newly named primary of a shard acknowledges no PUT of it until
 * {@link #promotionWaitNanos()} after it learned so (erda-cluster's {@code io.erda.cluster.PrimaryTenure}). A client
 * whose map still names the old primary confirmed it before the new map was written, so its lease has run out by
 * then, even if its clock runs {@link #DRIFT} slow. So a GET that begins after a PUT acknowledged by the new primary never routes to the old one,
 * whether the old one is dead, paused, cut off from ZooKeeper or still answering one-sided READs on its RNIC.
 */
public final class MapLease implements AutoCloseable {
    private static final Logger LOG = Logger.getLogger(MapLease.class.getName());
    /** How long a confirmation lets a client route by its map. */
    public static final Duration DURATION = Duration.ofMillis(150);
    /** How often the map is confirmed: three times per lease, so one slow round trip does not stall operations. */
    static final Duration RENEW_EVERY = DURATION.dividedBy(3);
    /** Bound on how much slower than a member's clock a client's monotonic clock may run (1 %, generous for NTP-less quartz). */
    public static final double DRIFT = 0.01;
    /** Added to the wait for what the bound leaves out: the member learning its promotion is not instantaneous. */
    static final Duration MARGIN = Duration.ofMillis(20);

    private final CuratorFramework zk;
    private final ClusterView view;
    private final Thread thread;
    private volatile long confirmedAt = Long.MIN_VALUE;
    private volatile boolean closed;

    MapLease(CuratorFramework zk, ClusterView view) {
        this.zk = zk;
        this.view = view;
        this.thread = Thread.ofPlatform().daemon().name("erda-map-lease").start(this::run);
    }

    /** What a member newly named primary waits before it acknowledges a PUT of the shard. */
    public static long promotionWaitNanos() {
        return (long) (DURATION.toNanos() * (1 + DRIFT)) + MARGIN.toNanos();
    }

    private void run() {
        while (!closed) {
            long started = System.nanoTime();
            try {
                confirm(started);
            } catch (InterruptedException e) {
                return;
            } catch (Exception e) {
                if (!closed) {
                    LOG.log(Level.FINE, "confirming the shard map failed (operations wait once the lease runs out)", e);
                }
            }
            long sleep = RENEW_EVERY.toNanos() - (System.nanoTime() - started);
            if (sleep > 0) {
                try {
                    Thread.sleep(Duration.ofNanos(sleep));
                } catch (InterruptedException e) {
                    return;
                }
            }
        }
    }

    private void confirm(long started) throws Exception {
        CountDownLatch synced = new CountDownLatch(1);
        zk.sync().inBackground((client, event) -> synced.countDown()).forPath(Zk.MAP);
        if (!synced.await(DURATION.toMillis(), TimeUnit.MILLISECONDS)) {
            return; // not confirmed this round
        }
        byte[] data = zk.getData().forPath(Zk.MAP);
        if (data == null || data.length == 0) {
            return;
        }
        ShardMap read = ShardMap.decode(data);
        view.offer(read);
        if (view.map().epoch() >= read.epoch()) { // offered: at least as new
            confirmedAt = started;
        }
    }

    /** Whether the map may be routed by now. */
    boolean valid() {
        long at = confirmedAt;
        return at != Long.MIN_VALUE && System.nanoTime() - at < DURATION.toNanos();
    }

    /** Nanoseconds since the last confirmation, or -1 if there was none. */
    long ageNanos() {
        long at = confirmedAt;
        return at == Long.MIN_VALUE ? -1 : System.nanoTime() - at;
    }

    @Override
    public void close() {
        closed = true;
        thread.interrupt();
    }
}
