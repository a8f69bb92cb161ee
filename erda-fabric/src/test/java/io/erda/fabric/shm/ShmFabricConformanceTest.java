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
import io.erda.fabric.MemoryRegion;
import io.erda.fabric.Opcode;
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
import java.time.Duration;
import java.util.EnumSet;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * The provider-neutral suite against {@code shm:///<tempDir>/fabric}, plus what only shm has: file-backed
 * exports, initiator-side accounting and write-latency model, export generations, the ring poller.
 */
class ShmFabricConformanceTest extends FabricConformanceTest {

    @Override
    protected URI listenUri(Path tempDir) {
        return ShmFabric.uriOf(tempDir.resolve("fabric"));
    }

    @Override
    protected Fabric openFabric(URI uri) {
        return Fabric.open(uri, Map.of("ringCapacity", "4096")); // small rings: wrap-around happens in every test
    }

    private Endpoint[] connectPair(EndpointOptions clientOptions) throws InterruptedException {
        Endpoint client = closeLater(initiator.createEndpoint(clientOptions));
        Thread connector = Thread.ofPlatform().start(() -> client.connect(listener.uri(), new byte[0]));
        var request = listener.accept(10, TimeUnit.SECONDS);
        Endpoint server = closeLater(target.createEndpoint());
        request.accept(server, new byte[0]);
        connector.join(10_000);
        assertThat(client.state()).isEqualTo(Endpoint.State.CONNECTED);
        return new Endpoint[] {client, server};
    }

    private static Completion take(Endpoint e, boolean send) throws InterruptedException {
        Completion c = (send ? e.sendQueue() : e.recvQueue()).take(10, TimeUnit.SECONDS);
        assertThat(c).as("completion").isNotNull();
        return c;
    }

    @Test
    void anonymousMemoryWithRemoteAccessIsRejectedWithAClearMessage() {
        assertThatThrownBy(() -> target.register(arena.allocate(4096), RegisterOptions.of(Access.all())))
                .isInstanceOf(FabricException.class)
                .hasMessageContaining("shm needs file-backed memory for remote access");
    }

    @Test
    void anonymousMemoryRegistersForLocalUse() {
        MemoryRegion local = target.registerLocal(arena.allocate(4096));
        assertThat(local.rkey()).isEqualTo(local.lkey());
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
    }

    @Test
    void writeLatencyModelIsAppliedPerCacheLineWritten() throws Exception {
        MemoryRegion file = targetMemory(4096, Access.all());
        ShmMemoryRegion remote = (ShmMemoryRegion) target.register(file.segment(), file.options().withWriteDelay(1));
        MemoryRegion local = initiatorBuffer(4096);
        try (SyncEndpoint sync = new SyncEndpoint(connectPair()[0])) {
            sync.write(local, 0, 200, remote.address(), remote.rkey());       // lines 0..3
            sync.write(local, 0, 2, remote.address() + 127, remote.rkey());   // straddles lines 1 and 2
            sync.fetchAdd(remote.address() + 1024, remote.rkey(), 1);         // one line
            sync.read(local, 0, 4096, remote.address(), remote.rkey());       // reads are not delayed
        }
        assertThat(remote.delayedCacheLines()).isEqualTo(4 + 2 + 1);
        assertThat(((ShmMemoryRegion) file).delayedCacheLines()).isZero();
    }

    @Test
    void accessAfterDeregistrationFailsWithRemoteAccessError() throws Exception {
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
        MemoryRegion local = initiatorBuffer(64);
        try (SyncEndpoint sync = new SyncEndpoint(pair[0])) {
            assertThat(sync.fetchAdd(remote.address() + 8, remote.rkey(), 3)).isZero();
        }
        assertThat(remote.segment().get(ValueLayout.JAVA_LONG, 8)).isEqualTo(3);
        assertThat(local.length()).isEqualTo(64);
    }

    @Test
    void accessWithoutTheFlagFailsAndLeavesMemoryUntouched() throws Exception {
        MemoryRegion remote = targetMemory(4096, EnumSet.of(Access.REMOTE_READ));
        MemoryRegion local = initiatorBuffer(64);
        local.segment().fill((byte) 7);
        Endpoint client = connectPair()[0];
        client.post(WorkRequest.write(1, local, 0, 64, remote.address(), remote.rkey()));
        client.post(WorkRequest.read(2, local, 0, 64, remote.address(), remote.rkey()));
        Completion c = take(client, true);
        assertThat(c.status()).isEqualTo(Status.REMOTE_ACCESS_ERROR);
        assertThat(c.detail()).contains("REMOTE_WRITE");
        assertThat(take(client, true).status()).isEqualTo(Status.WR_FLUSH_ERROR);
        assertThat(remote.segment().asSlice(0, 64).toArray(ValueLayout.JAVA_BYTE)).containsOnly(0);
        assertThat(client.state()).isEqualTo(Endpoint.State.ERROR);
    }

    @Test
    void concurrentAtomicsOfInitiatorAndTargetCpuNeverLoseAnUpdate() throws Exception {
        MemoryRegion remote = targetMemory(4096, Access.all());
        var word = ValueLayout.JAVA_LONG.varHandle();
        int n = 20_000;
        try (SyncEndpoint sync = new SyncEndpoint(connectPair()[0])) {
            Thread local = Thread.ofPlatform().start(() -> {
                for (int i = 0; i < n; i++) {
                    long unused = (long) word.getAndAdd(remote.segment(), 64L, 1L);
                }
            });
            for (int i = 0; i < n; i++) {
                sync.fetchAdd(remote.address() + 64, remote.rkey(), 1);
            }
            local.join();
        }
        assertThat(remote.segment().get(ValueLayout.JAVA_LONG, 64)).isEqualTo(2L * n);
    }

    @Test
    void messagesOfEverySizeArriveIntactAcrossRingWrapArounds() throws Exception {
        MemoryRegion out = initiatorBuffer(4096);
        MemoryRegion in = target.registerLocal(arena.allocate(4096));
        Endpoint[] pair = connectPair();
        int messages = 2_000;
        Thread receiver = Thread.ofPlatform().start(() -> {
            try {
                for (int i = 0; i < messages; i++) {
                    pair[1].postRecv(new RecvRequest(i, in, 0, 4064));
                    Completion c = take(pair[1], false);
                    assertThat(c.isSuccess()).as("%s", c).isTrue();
                    assertThat(c.byteLength()).isEqualTo(i % 4000 + 1);
                    for (int b = 0; b < c.byteLength(); b++) {
                        assertThat(in.segment().get(ValueLayout.JAVA_BYTE, b)).isEqualTo((byte) (i + b));
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
            Completion c = take(pair[0], true);
            assertThat(c.isSuccess()).as("%s", c).isTrue();
        }
        receiver.join(30_000);
        assertThat(receiver.isAlive()).isFalse();
    }

    @Test
    void sendWithoutAPostedReceiveFailsWithRnrAfterTheSendersTimeout() throws Exception {
        MemoryRegion out = initiatorBuffer(64);
        Endpoint[] pair = connectPair(EndpointOptions.defaults().withRnrTimeout(Duration.ofMillis(50)));
        pair[0].post(WorkRequest.send(1, out, 0, 16));
        pair[0].post(WorkRequest.read(2, out, 0, 8, 0, 0));
        Completion c = take(pair[0], true);
        assertThat(c.status()).isEqualTo(Status.RNR_RETRY_EXCEEDED);
        assertThat(take(pair[0], true).status()).isEqualTo(Status.WR_FLUSH_ERROR);
        awaitState(pair[1], Endpoint.State.ERROR);
    }

    @Test
    void messageLongerThanThePostedReceiveFailsBothSides() throws Exception {
        MemoryRegion out = initiatorBuffer(256);
        MemoryRegion in = target.registerLocal(arena.allocate(64));
        Endpoint[] pair = connectPair();
        pair[1].postRecv(new RecvRequest(7, in, 0, 64));
        pair[0].post(WorkRequest.send(1, out, 0, 100));
        Completion recv = take(pair[1], false);
        assertThat(recv.status()).isEqualTo(Status.LOCAL_LENGTH_ERROR);
        assertThat(recv.detail()).contains("100").contains("64");
        assertThat(take(pair[0], true).status()).isEqualTo(Status.REMOTE_INVALID_REQUEST);
        assertThat(pair[1].state()).isEqualTo(Endpoint.State.ERROR);
    }

    @Test
    void writeWithImmediateDeliversTheImmediateAfterTheData() throws Exception {
        MemoryRegion remote = targetMemory(4096, Access.all());
        MemoryRegion local = initiatorBuffer(64);
        MemoryRegion recvBuffer = target.registerLocal(arena.allocate(64));
        Endpoint[] pair = connectPair();
        pair[1].postRecv(new RecvRequest(5, recvBuffer, 0, 64));
        local.segment().fill((byte) 3);
        try (SyncEndpoint sync = new SyncEndpoint(pair[0])) {
            sync.writeWithImm(local, 0, 32, remote.address() + 64, remote.rkey(), 0xCAFE);
        }
        Completion c = take(pair[1], false);
        assertThat(c.opcode()).isEqualTo(Opcode.RECV_WITH_IMM);
        assertThat(c.immData()).isEqualTo(0xCAFE);
        assertThat(c.byteLength()).isEqualTo(32);
        assertThat(remote.segment().get(ValueLayout.JAVA_BYTE, 64 + 31)).isEqualTo((byte) 3);
    }

    @Test
    void postingBeyondMaxSendWrThrows() throws Exception {
        MemoryRegion out = initiatorBuffer(64);
        Endpoint client = connectPair(EndpointOptions.defaults().withDepth(2, 2).withRnrTimeout(Duration.ofSeconds(5)))[0];
        client.post(WorkRequest.send(1, out, 0, 8)); // no receive posted: stays outstanding
        client.post(WorkRequest.send(2, out, 0, 8));
        assertThatThrownBy(() -> client.post(WorkRequest.send(3, out, 0, 8)))
                .isInstanceOf(FabricException.class).hasMessageContaining("maxSendWr 2");
    }

    @Test
    void abortFlushesOutstandingWorkOnBothSides() throws Exception {
        MemoryRegion out = initiatorBuffer(64);
        MemoryRegion in = target.registerLocal(arena.allocate(64));
        Endpoint[] pair = connectPair(EndpointOptions.defaults().withRnrTimeout(Duration.ofSeconds(30)));
        pair[1].postRecv(new RecvRequest(9, in, 0, 8));
        pair[0].post(WorkRequest.send(1, out, 0, 8));
        take(pair[1], false); // consumed by the first SEND
        pair[1].postRecv(new RecvRequest(10, in, 0, 8));
        pair[0].abort();
        assertThat(pair[0].state()).isEqualTo(Endpoint.State.ERROR);
        Completion flushed = take(pair[1], false);
        assertThat(flushed.status()).isEqualTo(Status.WR_FLUSH_ERROR);
        assertThat(pair[1].state()).isEqualTo(Endpoint.State.ERROR);
    }

    @Test
    void rejectedConnectCarriesTheReason() throws Exception {
        Endpoint client = closeLater(initiator.createEndpoint());
        Thread rejecter = Thread.ofPlatform().start(() -> {
            try {
                listener.accept(10, TimeUnit.SECONDS).reject("no room for tenant 42");
            } catch (InterruptedException e) {
                throw new AssertionError(e);
            }
        });
        assertThatThrownBy(() -> client.connect(listener.uri(), new byte[0]))
                .isInstanceOf(FabricException.class).hasMessageContaining("no room for tenant 42");
        rejecter.join();
    }

    @Test
    void idlePollerParksInsteadOfSpinning() throws Exception {
        connectPair();
        Thread poller = ((ShmFabric) target).pollerThread();
        var threads = ManagementFactory.getThreadMXBean();
        Thread.sleep(200); // past the spin and yield phases
        long before = threads.getThreadCpuTime(poller.threadId());
        Thread.sleep(1_000);
        long used = threads.getThreadCpuTime(poller.threadId()) - before;
        assertThat(used).as("poller CPU over an idle second, ns").isLessThan(300_000_000L);
        assertThat(target.stats().engineCpuNanos()).isPositive();
    }

    private static void awaitState(Endpoint e, Endpoint.State state) throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while (e.state() != state && System.nanoTime() < deadline) {
            Thread.sleep(5);
        }
        assertThat(e.state()).isEqualTo(state);
    }
}
