package io.erda.cluster;

import static org.assertj.core.api.Assertions.assertThat;

import io.erda.cluster.client.MapLease;
import io.erda.cluster.client.Zk;
import io.erda.cluster.harness.ZkLink;
import io.erda.cluster.harness.ZooKeeperMain;
import java.net.URI;
import java.time.Duration;
import java.util.Set;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.test.TestingServer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * Members' leases against a real ZooKeeper: a member that renews is never declared gone; one whose renewals stop is,
 * once its lease has stood still its length plus drift and margin; a member cut off from ZooKeeper finds its own lease
 * run out and calls its expiry action.
 */
class MemberLeaseTest {
    private static final Duration LEASE = Duration.ofMillis(200);
    private TestingServer zookeeper;
    private URI zk;

    @BeforeEach
    void start() throws Exception {
        zookeeper = ZooKeeperMain.start(0);
        zk = URI.create("zk://127.0.0.1:" + zookeeper.getPort() + "/erda");
    }

    @AfterEach
    void stop() throws Exception {
        zookeeper.close();
    }

    @Test
    void aRenewingMemberStaysAndOneThatStopsRenewingIsDeclaredGone() throws Exception {
        try (CuratorFramework member = Zk.connect(zk, 5000); CuratorFramework coordinator = Zk.connect(zk, 5000)) {
            CountDownLatch halted = new CountDownLatch(1);
            MemberLease lease = new MemberLease(member, 1, LEASE, halted::countDown).start();
            long session = member.getZookeeperClient().getZooKeeper().getSessionId();
            LeaseWatch watch = new LeaseWatch(coordinator);
            long end = System.nanoTime() + 4 * LEASE.toNanos();
            while (System.nanoTime() < end) {
                assertThat(watch.poll()).as("expired while renewing").isEmpty();
                Thread.sleep(10);
            }
            assertThat(lease.valid()).isTrue();
            lease.close(); // renewals stop; the node and the session stay, as in a paused process
            long stopped = System.nanoTime();
            Set<Long> expired = Set.of();
            while (expired.isEmpty() && System.nanoTime() - stopped < 10 * LEASE.toNanos()) {
                expired = watch.poll();
                Thread.sleep(5);
            }
            long after = System.nanoTime() - stopped;
            assertThat(expired).containsExactly(session);
            assertThat(after).as("declared gone after (ns)").isGreaterThanOrEqualTo(
                    LeaseWatch.declaredAfter(LEASE).toNanos() - lease.renewEvery().toNanos());
            // declared early by a map lease: a successor's wait before its first acknowledged PUT covers the rest
            assertThat(LeaseWatch.declaredAfter(LEASE).toNanos() + MapLease.promotionWaitNanos())
                    .isGreaterThan(LeaseWatch.expiry(LEASE).toNanos());
            assertThat(halted.getCount()).as("a closed lease does not halt").isEqualTo(1);
        }
    }

    @Test
    void aMemberCutOffFromZooKeeperFindsItsLeaseRunOut() throws Exception {
        try (ZkLink link = new ZkLink(zookeeper.getPort());
             CuratorFramework member = Zk.connect(URI.create("zk://127.0.0.1:" + link.port() + "/erda"), 5000)) {
            CountDownLatch halted = new CountDownLatch(1);
            MemberLease lease = new MemberLease(member, 1, LEASE, halted::countDown).start();
            Thread.sleep(2 * LEASE.toMillis());
            assertThat(halted.getCount()).as("expired while connected").isEqualTo(1);
            link.cut();
            long cut = System.nanoTime();
            assertThat(halted.await(10 * LEASE.toMillis(), TimeUnit.MILLISECONDS)).as("expiry action ran").isTrue();
            assertThat(System.nanoTime() - cut).as("ran out after (ns)").isLessThan(LEASE.toNanos() + 2_000_000_000L); // the watchdog, late on a busy machine
            assertThat(lease.valid()).isFalse();
            lease.close();
        }
    }
}
