package io.erda.server;

import io.erda.core.testing.ShmTempDirFactory;
import io.erda.fabric.ConnectionRequest;
import io.erda.fabric.Endpoint;
import io.erda.protocol.CleanRequest;
import io.erda.protocol.MessageType;
import io.erda.protocol.PutReply;
import io.erda.protocol.WireStatus;
import io.erda.server.request.ProtocolHandler;
import java.net.URI;
import java.nio.file.Path;
import java.time.Duration;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.UnaryOperator;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import static io.erda.server.TestStores.bytes;
import static org.assertj.core.api.Assertions.assertThat;

/** Server CPU is counted for work only: one-sided READs over shm never reach a server thread. */
class ServerCpuTest {
    @TempDir(factory = ShmTempDirFactory.class)
    Path dir;

    private static long cpu(RequestServer server) {
        return cpuIn(server.stats());
    }

    /**
     * server_cpu_ns once the lease validator's last pass is charged: the validator adds a pass's CPU after the pass,
     * so pending_leases=0 can show while that pass's time is still on its way. With no lease pending no thread charges
     * anything, so the counter holds still for several settle periods (12.5 ms here).
     */
    private static long settledCpu(RequestServer server) throws InterruptedException {
        while (!server.stats().contains("pending_leases=0\n")) {
            Thread.sleep(10);
        }
        long cpu = cpu(server);
        for (int still = 0; still < 5; ) {
            Thread.sleep(20);
            long now = cpu(server);
            still = now == cpu ? still + 1 : 0;
            cpu = now;
        }
        return cpu;
    }

    @Test
    void oneSidedReadsOverShmCostNoServerCpu() throws InterruptedException {
        try (RequestServer server = RequestServer.start(TestStores.config(dir, "shm", Duration.ofMillis(50)));
             RawClient client = RawClient.connect(server.uri())) {
            client.hello();
            PutReply where = client.putAndWrite(bytes("k"), bytes("value"));
            long before = settledCpu(server); // the validator has nothing left to do
            assertThat(before).isPositive();
            for (int i = 0; i < 200; i++) {
                client.read(where.address(), where.rkey(), where.objectLength());
            }
            assertThat(cpu(server)).isEqualTo(before);
        }
    }

    /** What a benchmark does around a run: STATS over the wire is monitoring, not work charged to operations. */
    @Test
    void readingTheCountersOverTheWireCostsNoServerCpu() throws InterruptedException {
        try (RequestServer server = RequestServer.start(TestStores.config(dir, "tcp", Duration.ofMillis(50)));
             RawClient client = RawClient.connect(server.uri())) {
            client.putAndWrite(bytes("k"), bytes("value"));
            long before = settledCpu(server);
            assertThat(before).as("the PUT's work is counted").isPositive();
            for (int i = 0; i < 50; i++) {
                assertThat(client.stats()).contains("server_cpu_ns=" + before + "\n");
            }
        }
    }

    /**
     * A connection's setup is charged before the client is answered: a window of the counters opened once the client
     * is connected (ycsb-compare opens it when its client says so) sees none of it. Here the acceptor thread is held
     * right after it answered, as a descheduled thread would be, until the client has said HELLO and read the
     * counter; the counter must not move when the acceptor goes on.
     */
    @Test
    void aConnectionsSetupIsChargedBeforeTheClientIsAnswered() throws InterruptedException {
        Hold hold = new Hold();
        UnaryOperator<ConnectionRequest> heldAfterAnswering = request -> new ConnectionRequest() {
            @Override
            public URI peer() {
                return request.peer();
            }

            @Override
            public byte[] privateData() {
                return request.privateData();
            }

            @Override
            public void accept(Endpoint endpoint, byte[] replyPrivateData) {
                request.accept(endpoint, replyPrivateData);
                hold.here();
            }

            @Override
            public void reject(String reason) {
                request.reject(reason);
            }
        };
        try (RequestServer server = RequestServer.start(TestStores.config(dir, "tcp", Duration.ofMillis(50)),
                ServerHooks.NONE.withRequests(heldAfterAnswering));
             RawClient client = RawClient.connect(server.uri())) {
            client.hello();
            // HELLO's thread charges it just after replying: wait until the counter holds still (STATS is not charged)
            long connected = cpuIn(client.stats());
            for (long again; (again = cpuIn(client.stats())) != connected; connected = again) {
                Thread.sleep(20);
            }
            assertThat(connected).as("the setup and HELLO are counted").isPositive();
            assertThat(hold.returned).as("the acceptor is still held").isFalse();
            hold.release(); // what the acceptor does after answering has run (it charged the setup there before)
            assertThat(cpuIn(client.stats())).isEqualTo(connected);
        }
    }

    /**
     * A request is charged before its reply is posted, not after: once answered, its client goes on, and a benchmark
     * may close a window of the counters. Here the worker is held right after it posted the first PUT's reply (a
     * handler that returns late, as a descheduled worker would) while the client WRITEs the object and the counter
     * settles; when the worker goes on, the counter must not move (what it does after a reply is carried to its next
     * charged one).
     */
    @Test
    void aRequestIsChargedBeforeItsReplyIsPosted() throws InterruptedException {
        Hold hold = new Hold();
        AtomicBoolean held = new AtomicBoolean();
        UnaryOperator<ProtocolHandler> heldAfterReplying = handler -> (request, replies) -> {
            handler.handle(request, replies);
            if (request.type() == MessageType.PUT && held.compareAndSet(false, true)) {
                hold.here();
            }
        };
        // shm: the client's WRITE reaches PM without a server thread, so it completes while the worker is held
        try (RequestServer server = RequestServer.start(TestStores.config(dir, "shm", Duration.ofMillis(50)),
                ServerHooks.NONE.withHandlers(heldAfterReplying));
             RawClient client = RawClient.connect(server.uri())) {
            client.hello();
            long connected = settledCpu(server);
            client.putAndWrite(bytes("k"), bytes("value"));
            long answered = settledCpu(server);
            assertThat(answered).as("the PUT and its lease are counted").isGreaterThan(connected);
            assertThat(hold.returned).as("the worker is still held").isFalse();
            hold.release(); // the worker has finished the PUT (the old code charged it there)
            assertThat(cpu(server)).isEqualTo(answered);
            client.putAndWrite(bytes("k"), bytes("value 2")); // the next request's reply charges the carried tail
            assertThat(settledCpu(server)).isGreaterThan(answered);
        }
    }

    /** Holds a server thread where it calls {@link #here} until the test releases it. */
    private static final class Hold {
        private final CountDownLatch released = new CountDownLatch(1);
        final AtomicBoolean returned = new AtomicBoolean();

        void here() {
            try {
                released.await(10, TimeUnit.SECONDS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            } finally {
                returned.set(true);
            }
        }

        /** Lets the held thread go on and waits until it has returned and run on a while (200 ms). */
        void release() throws InterruptedException {
            released.countDown();
            while (!returned.get()) {
                Thread.sleep(5);
            }
            Thread.sleep(200);
        }
    }

    private static long cpuIn(String stats) {
        return Long.parseLong(stats.replaceAll("(?s).*server_cpu_ns=(\\d+).*", "$1"));
    }

    /**
     * An admin CLEAN is server work like a background cleaning run: its CPU is charged to server_cpu_ns and
     * cleaner_cpu_ns (it ran on a virtual thread, whose CPU the JVM does not measure, and was charged nothing).
     */
    @Test
    void anAdminCleanIsChargedAsCleanerAndServerCpu() throws InterruptedException {
        try (RequestServer server = RequestServer.start(TestStores.config(dir, "shm", Duration.ofMillis(50)));
             RawClient client = RawClient.connect(server.uri())) {
            server.startCleaning(0); // the cleaner, for admin runs only
            client.hello();
            for (int round = 0; round < 20; round++) {
                for (int k = 0; k < 50; k++) {
                    client.putAndWrite(bytes("key-" + k), bytes("value " + round + " of key " + k));
                }
            }
            long before = settledCpu(server);
            assertThat(TestStores.stat(server, "cleaner_cpu_ns")).as("no background run (no threshold)").isZero();
            for (int head = 0; head < TestStores.HEADS; head++) {
                RawClient.Reply reply = client.call(MessageType.CLEAN, new CleanRequest(head)::encode);
                while (reply.type() == MessageType.HEAD_STATE) { // the run's notifications come first
                    reply = client.receive();
                }
                assertThat(reply.type()).as("CLEAN of head %d", head).isEqualTo(MessageType.CLEAN_REPLY);
                assertThat(reply.status()).isEqualTo(WireStatus.OK);
            }
            long cleaner = TestStores.stat(server, "cleaner_cpu_ns");
            assertThat(cleaner).as("the CLEANs' runs").isPositive();
            assertThat(cpu(server) - before).as("server CPU since the CLEANs began").isGreaterThanOrEqualTo(cleaner);
        }
    }
}
