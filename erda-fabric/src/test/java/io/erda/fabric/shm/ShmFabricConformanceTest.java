package io.erda.fabric.shm;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.erda.fabric.Access;
import io.erda.fabric.Completion;
import io.erda.fabric.CompletionException;
import io.erda.fabric.Endpoint;
import io.erda.fabric.EndpointOptions;
import io.erda.fabric.Fabric;
import io.erda.fabric.FabricException;
import io.erda.fabric.Listener;
import io.erda.fabric.MemoryRegion;
import io.erda.fabric.RecvRequest;
import io.erda.fabric.RegisterOptions;
import io.erda.fabric.Status;
import io.erda.fabric.SyncEndpoint;
import io.erda.fabric.WorkRequest;
import io.erda.fabric.conformance.FabricConformanceTest;
import java.lang.foreign.ValueLayout;
import java.lang.management.ManagementFactory;
import java.net.URI;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * The provider-neutral suite against {@code shm:///<tempDir>/fabric}, plus what only shm has: file-backed
 * exports, initiator-side accounting and write-latency model, export generations, the rings and their poller.
 */
class ShmFabricConformanceTest extends FabricConformanceTest {

    @Override
    protected URI listenUri(Path tempDir) {
        return ShmFabric.uriOf(tempDir.resolve("fabric"));
    }

    /**
     * Small rings: wrap-around and a full ring happen in the suite. Pollers sleep until a doorbell, without the
     * timed safety net, so a lost wakeup anywhere in the suite is a hang that fails the test.
     */
    @Override
    protected Map<String, String> fabricProperties() {
        return Map.of("ringCapacity", "4096", "pollerSleepMillis", "0");
    }

    @Test
    void anonymousMemoryWithRemoteAccessIsRejectedWithAClearMessage() {
        assertThatThrownBy(() -> target.register(arena.allocate(4096), RegisterOptions.of(Access.all())))
                .isInstanceOf(FabricException.class)
                .hasMessageContaining("shm needs file-backed memory for remote access");
    }

    /**
     * shm finishes a signalled READ or WRITE on the caller's thread when nothing posted before it is outstanding (the
     * queue round trip spared: a GET is two such READs), and posts an unsignalled one, which queues nothing on success.
     */
    @Test
    void aReadOrWriteWithNothingOutstandingExecutesOnTheCallersThread() throws Exception {
        MemoryRegion remote = targetMemory(4096, Access.all());
        MemoryRegion local = initiatorBuffer(4096);
        Endpoint e = connectPair()[0];
        local.segment().asSlice(0, 128).fill((byte) 3);
        assertThat(e.executeNow(WorkRequest.write(1, local, 0, 128, remote.address(), remote.rkey()))).isTrue();
        assertThat(e.executeNow(WorkRequest.read(2, local, 256, 128, remote.address(), remote.rkey()))).isTrue();
        assertThat(local.segment().asSlice(256, 128).mismatch(local.segment().asSlice(0, 128))).isEqualTo(-1);
        assertThat(e.executeNow(WorkRequest.write(3, local, 0, 64, remote.address() + 1024, remote.rkey()).unsignaled()))
                .isFalse();
        assertThat(e.sendQueue().take(50, TimeUnit.MILLISECONDS)).isNull();
        assertThat(remote.remoteBytesWritten()).isEqualTo(128 + 64);
        assertThat(((ShmMemoryRegion) remote).remoteBytesRead()).isEqualTo(128);
    }

    @Test
    void anonymousMemoryRegistersForLocalUse() {
        MemoryRegion local = targetBuffer(4096);
        assertThat(target.regions()).contains(local);
    }

    @Test
    void remoteByteCounterCountsWhatInitiatorsWrote() throws Exception {
        MemoryRegion remote = targetMemory(4096, Access.all());
        MemoryRegion local = initiatorBuffer(4096);
        try (SyncEndpoint sync = new SyncEndpoint(connectPair()[0])) {
            sync.write(local, 0, 100, remote.address(), remote.rkey());
            sync.fetchAdd(remote.address() + 512, remote.rkey(), 5);
            sync.compareAndSwap(remote.address() + 512, remote.rkey(), 99, 1); // fails: writes nothing
            sync.read(local, 0, 300, remote.address(), remote.rkey());
        }
        assertThat(remote.remoteBytesWritten()).isEqualTo(108);
        assertThat(((ShmMemoryRegion) remote).remoteBytesRead()).isEqualTo(300);
        assertThat(target.stats().bytesWrittenByPeers()).isEqualTo(108);
        assertThat(target.stats().bytesReadByPeers()).isEqualTo(300);
    }

    /**
     * A long-lived target registers and deregisters regions without end (the server's cleaner makes and retires log
     * regions all the time). Until 2026-11-28 every export took a counters slot for the instance's life, and the
     * 4,097th registration failed ("has exported 4096 regions"): about half an hour of update-only load on shm. A
     * deregistered export's slot is now taken again, its counters from zero.
     */
    @Test
    void countersSlotsOfDeregisteredExportsAreTakenAgainFromZero() throws Exception {
        MemoryRegion local = initiatorBuffer(64);
        try (SyncEndpoint sync = new SyncEndpoint(connectPair()[0])) {
            MemoryRegion first = targetMemory(4096, Access.all());
            sync.write(local, 0, 64, first.address(), first.rkey());
            first.close();
            for (int i = 0; i < CountersFile.DEFAULT_SLOTS + 10; i++) {
                targetMemory(4096, Access.all()).close();
            }
            MemoryRegion last = targetMemory(4096, Access.all());
            assertThat(((ShmMemoryRegion) last).counterSlot()).as("the first region's slot, taken again")
                    .isEqualTo(((ShmMemoryRegion) first).counterSlot());
            assertThat(last.remoteBytesWritten()).as("a reused slot starts from zero").isZero();
            sync.write(local, 0, 8, last.address(), last.rkey());
            assertThat(last.remoteBytesWritten()).isEqualTo(8);
            assertThat(first.remoteBytesWritten()).as("the first region's counts, frozen at its close").isEqualTo(64);
            assertThat(target.stats().bytesWrittenByPeers()).isEqualTo(64 + 8);
        }
    }

    @Test
    void writeLatencyModelIsAppliedPerCacheLineWritten() throws Exception {
        ShmMemoryRegion remote = (ShmMemoryRegion) targetMemory(4096, RegisterOptions.of(Access.all()).withWriteDelay(1));
        ShmMemoryRegion undelayed = (ShmMemoryRegion) targetMemory(4096, Access.all());
        MemoryRegion local = initiatorBuffer(4096);
        try (SyncEndpoint sync = new SyncEndpoint(connectPair()[0])) {
            sync.write(local, 0, 200, remote.address(), remote.rkey());       // lines 0..3
            sync.write(local, 0, 2, remote.address() + 127, remote.rkey());   // straddles lines 1 and 2
            sync.fetchAdd(remote.address() + 1024, remote.rkey(), 1);         // one line
            sync.read(local, 0, 4096, remote.address(), remote.rkey());       // reads are not delayed
            sync.write(local, 0, 200, undelayed.address(), undelayed.rkey());
        }
        assertThat(remote.delayedCacheLines()).isEqualTo(4 + 2 + 1);
        assertThat(undelayed.delayedCacheLines()).isZero();
    }

    @Test
    void deregistrationIsSeenByAnInitiatorThatAlreadyMappedTheRegion() throws Exception {
        MemoryRegion remote = targetMemory(4096, Access.all());
        MemoryRegion local = initiatorBuffer(64);
        try (SyncEndpoint sync = new SyncEndpoint(connectPair()[0])) {
            sync.read(local, 0, 8, remote.address(), remote.rkey()); // maps the region on the initiator
            remote.close();
            assertThatThrownBy(() -> sync.write(local, 0, 8, remote.address(), remote.rkey()))
                    .isInstanceOfSatisfying(CompletionException.class,
                            e -> assertThat(e.status()).isEqualTo(Status.REMOTE_ACCESS_ERROR));
        }
    }

    @Test
    void regionRegisteredAfterConnectIsReachable() throws Exception {
        Endpoint[] pair = connectPair();
        MemoryRegion remote = targetMemory(4096, Access.all());
        try (SyncEndpoint sync = new SyncEndpoint(pair[0])) {
            assertThat(sync.fetchAdd(remote.address() + 8, remote.rkey(), 3)).isZero();
        }
        assertThat(remote.segment().get(ValueLayout.JAVA_LONG, 8)).isEqualTo(3);
    }

    @Test
    void messagesOfEverySizeArriveIntactAcrossRingWrapArounds() throws Exception {
        MemoryRegion out = initiatorBuffer(4096);
        MemoryRegion in = targetBuffer(4096);
        // The receiver posts one buffer at a time and checks every byte; on a loaded 2-core machine that can
        // take longer than the default RNR window, which is not what this test is about.
        EndpointOptions patient = EndpointOptions.defaults().withRnrTimeout(java.time.Duration.ofSeconds(WAIT_SECONDS));
        Endpoint[] pair = connectPair(patient, patient, server -> { });
        int messages = 2_000;
        Thread receiver = Thread.ofPlatform().start(() -> {
            try {
                for (int i = 0; i < messages; i++) {
                    pair[1].postRecv(new RecvRequest(i, in, 0, 4064));
                    Completion c = await(pair[1].recvQueue());
                    assertThat(c.isSuccess()).as("%s", c).isTrue();
                    assertThat(c.byteLength()).isEqualTo(i % 4000 + 1);
                    for (int b = 0; b < c.byteLength(); b++) {
                        if (in.segment().get(ValueLayout.JAVA_BYTE, b) != (byte) (i + b)) {
                            throw new AssertionError("message " + i + " byte " + b + " is "
                                    + in.segment().get(ValueLayout.JAVA_BYTE, b) + ", expected " + (byte) (i + b));
                        }
                    }
                }
            } catch (InterruptedException e) {
                throw new AssertionError(e);
            }
        });
        for (int i = 0; i < messages; i++) {
            int length = i % 4000 + 1;
            for (int b = 0; b < length; b++) {
                out.segment().set(ValueLayout.JAVA_BYTE, b, (byte) (i + b));
            }
            pair[0].post(WorkRequest.send(i, out, 0, length));
            Completion c = await(pair[0].sendQueue());
            assertThat(c.isSuccess()).as("%s", c).isTrue();
        }
        receiver.join(30_000);
        assertThat(receiver.isAlive()).isFalse();
    }

    @Test
    void messageLargerThanTheRingFailsLocallyWithLengthError() throws Exception {
        MemoryRegion out = initiatorBuffer(8192);
        Endpoint client = connectPair()[0];
        client.post(WorkRequest.send(1, out, 0, 8192));
        Completion c = await(client.sendQueue());
        assertThat(c.status()).isEqualTo(Status.LOCAL_LENGTH_ERROR);
        assertThat(c.detail()).contains("8192");
    }

    @Test
    void roundTripsAfterBothPollersFellAsleepAreWokenByDoorbells() throws Exception {
        int rounds = 8;
        MemoryRegion clientBuf = initiatorBuffer(128);
        MemoryRegion serverBuf = targetBuffer(128);
        Endpoint[] pair = connectPair();
        Endpoint client = pair[0];
        Endpoint server = pair[1];
        long targetWakeups = ((ShmFabric) target).doorbellWakeups();
        long initiatorWakeups = ((ShmFabric) initiator).doorbellWakeups();
        for (int i = 0; i < rounds; i++) {
            server.postRecv(new RecvRequest(i, serverBuf, 0, 64));
            client.postRecv(new RecvRequest(i, clientBuf, 64, 64));
            Thread.sleep(150); // far past the spin and yield phases: both pollers block until a doorbell
            clientBuf.segment().set(ValueLayout.JAVA_LONG, 0, 1000L + i);
            client.post(WorkRequest.send(i, clientBuf, 0, 8)); // wakes the target's poller
            Completion request = await(server.recvQueue());
            assertThat(request.isSuccess()).as("%s", request).isTrue();
            assertThat(serverBuf.segment().get(ValueLayout.JAVA_LONG, 0)).isEqualTo(1000L + i);
            Completion sent = await(client.sendQueue()); // its ACK wakes the initiator's poller
            assertThat(sent.isSuccess()).as("%s", sent).isTrue();
            serverBuf.segment().set(ValueLayout.JAVA_LONG, 8, 2000L + i);
            server.post(WorkRequest.send(100 + i, serverBuf, 8, 8));
            assertThat(await(server.sendQueue()).isSuccess()).isTrue();
            Completion reply = await(client.recvQueue());
            assertThat(reply.isSuccess()).as("%s", reply).isTrue();
            assertThat(clientBuf.segment().get(ValueLayout.JAVA_LONG, 64)).isEqualTo(2000L + i);
        }
        assertThat(((ShmFabric) target).doorbellWakeups() - targetWakeups).as("target's doorbell wakeups").isGreaterThanOrEqualTo(rounds);
        assertThat(((ShmFabric) initiator).doorbellWakeups() - initiatorWakeups).as("initiator's doorbell wakeups")
                .isGreaterThanOrEqualTo(rounds);
    }

    /**
     * Waiters on the completion queues consume the rings themselves (inline progress) while the pollers do too:
     * several connections of one fabric pair ping-pong at once, every thread waiting with take, and every message
     * must arrive once, intact and in order.
     */
    @Test
    void concurrentInlinePollersLoseAndDuplicateNoMessage() throws Exception {
        int connections = 4;
        int rounds = 2_000;
        List<Thread> threads = new ArrayList<>();
        List<Throwable> failures = new CopyOnWriteArrayList<>();
        // Eight threads on two cores: an echo thread can be descheduled past the default RNR window before it
        // reposts its receive, which is not what this test is about.
        EndpointOptions patient = EndpointOptions.defaults().withRnrTimeout(java.time.Duration.ofSeconds(WAIT_SECONDS));
        for (int k = 0; k < connections; k++) {
            Endpoint[] pair = connectPair(patient, patient, server -> { });
            MemoryRegion clientBuf = initiatorBuffer(64);
            MemoryRegion serverBuf = targetBuffer(64);
            long base = 1_000_000L * (k + 1);
            threads.add(Thread.ofPlatform().start(() -> echo(pair[1], serverBuf, rounds, failures)));
            threads.add(Thread.ofPlatform().start(() -> {
                try {
                    for (int i = 0; i < rounds; i++) {
                        pair[0].postRecv(new RecvRequest(i, clientBuf, 32, 32));
                        clientBuf.segment().set(ValueLayout.JAVA_LONG, 0, base + i);
                        pair[0].post(WorkRequest.send(i, clientBuf, 0, 8));
                        Completion sent = await(pair[0].sendQueue());
                        assertThat(sent.isSuccess()).as("%s", sent).isTrue();
                        Completion reply = await(pair[0].recvQueue());
                        assertThat(reply.isSuccess()).as("%s", reply).isTrue();
                        assertThat(reply.wrId()).isEqualTo(i);
                        assertThat(clientBuf.segment().get(ValueLayout.JAVA_LONG, 32)).isEqualTo(-(base + i));
                    }
                } catch (Throwable t) {
                    failures.add(t);
                }
            }));
        }
        for (Thread t : threads) {
            t.join(60_000);
            assertThat(t.isAlive()).as("%s still running", t).isFalse();
        }
        assertThat(failures).isEmpty();
    }

    /**
     * While threads wait on the completion queues (and so poll the rings inline), both fabrics' pollers stand by
     * instead of polling beside them: in a ping-pong whose threads always wait with take, the pollers handle few of
     * the records (those that arrive while a waiter was descheduled long enough to park), where pollers that kept
     * polling would race the waiters for every one (measured: about 1% here, and about half, in 50 times the time,
     * with the poller kept polling beside the waiters).
     */
    @Test
    void pollersStandByWhileWaitersPollInline() throws Exception {
        EndpointOptions patient = EndpointOptions.defaults().withRnrTimeout(java.time.Duration.ofSeconds(WAIT_SECONDS));
        Endpoint[] pair = connectPair(patient, patient, server -> { });
        MemoryRegion clientBuf = initiatorBuffer(64);
        MemoryRegion serverBuf = targetBuffer(64);
        int warmup = 2_000;
        int rounds = 10_000;
        List<Throwable> failures = new CopyOnWriteArrayList<>();
        Thread echo = Thread.ofPlatform().start(() -> {
            try {
                for (int i = 0; i < warmup + rounds; i++) {
                    pair[1].postRecv(new RecvRequest(i, serverBuf, 0, 32));
                    Completion request = await(pair[1].recvQueue());
                    assertThat(request.isSuccess()).as("%s", request).isTrue();
                    pair[1].post(WorkRequest.send(i, serverBuf, 32, 8));
                    assertThat(await(pair[1].sendQueue()).isSuccess()).isTrue();
                }
            } catch (Throwable t) {
                failures.add(t);
            }
        });
        long targetBefore = 0;
        long initiatorBefore = 0;
        for (int i = 0; i < warmup + rounds; i++) {
            if (i == warmup) {
                targetBefore = ((ShmFabric) target).pollerRecordsHandled();
                initiatorBefore = ((ShmFabric) initiator).pollerRecordsHandled();
            }
            pair[0].postRecv(new RecvRequest(i, clientBuf, 32, 32));
            pair[0].post(WorkRequest.send(i, clientBuf, 0, 8));
            assertThat(await(pair[0].sendQueue()).isSuccess()).isTrue();
            assertThat(await(pair[0].recvQueue()).isSuccess()).isTrue();
        }
        echo.join(WAIT_SECONDS * 1000L);
        assertThat(failures).isEmpty();
        // each side's inbound ring carried a SEND and an ACK per round
        long targetHandled = ((ShmFabric) target).pollerRecordsHandled() - targetBefore;
        long initiatorHandled = ((ShmFabric) initiator).pollerRecordsHandled() - initiatorBefore;
        assertThat(targetHandled).as("records the target's poller handled of %d", 2 * rounds).isLessThan(2L * rounds / 4);
        assertThat(initiatorHandled).as("records the initiator's poller handled of %d", 2 * rounds).isLessThan(2L * rounds / 4);
    }

    /** Answers each of {@code rounds} 8-byte messages with its negation. */
    private static void echo(Endpoint server, MemoryRegion buf, int rounds, List<Throwable> failures) {
        try {
            for (int i = 0; i < rounds; i++) {
                server.postRecv(new RecvRequest(i, buf, 0, 32));
                Completion request = await(server.recvQueue());
                assertThat(request.isSuccess()).as("%s", request).isTrue();
                buf.segment().set(ValueLayout.JAVA_LONG, 32, -buf.segment().get(ValueLayout.JAVA_LONG, 0));
                server.post(WorkRequest.send(i, buf, 32, 8));
                Completion sent = await(server.sendQueue());
                assertThat(sent.isSuccess()).as("%s", sent).isTrue();
            }
        } catch (Throwable t) {
            failures.add(t);
        }
    }

    @Test
    void idlePollerParksInsteadOfSpinning() throws Exception {
        URI uri = ShmFabric.uriOf(tempDir.resolve("defaults"));
        try (Fabric idle = Fabric.open(uri); Listener idleListener = idle.listen(uri)) { // the default timed sleep
            Endpoint client = closeLater(initiator.createEndpoint());
            Thread connector = Thread.ofPlatform().start(() -> client.connect(uri, new byte[0]));
            idleListener.accept(WAIT_SECONDS, TimeUnit.SECONDS).accept(closeLater(idle.createEndpoint()), new byte[0]);
            connector.join(WAIT_SECONDS * 1000);
            Thread poller = ((ShmFabric) idle).pollerThread();
            var threads = ManagementFactory.getThreadMXBean();
            Thread.sleep(200); // past the spin and yield phases
            long before = threads.getThreadCpuTime(poller.threadId());
            Thread.sleep(1_000);
            long used = threads.getThreadCpuTime(poller.threadId()) - before;
            assertThat(used).as("poller CPU over an idle second, ns").isLessThan(50_000_000L);
            assertThat(idle.stats().engineCpuNanos()).isPositive();
        }
    }
}
