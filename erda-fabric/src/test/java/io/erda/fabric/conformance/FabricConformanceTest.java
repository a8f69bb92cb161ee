package io.erda.fabric.conformance;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatCode;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.erda.fabric.Access;
import io.erda.fabric.Backing;
import io.erda.fabric.Completion;
import io.erda.fabric.CompletionQueue;
import io.erda.fabric.DurableMirror;
import io.erda.fabric.ConnectionRequest;
import io.erda.fabric.Endpoint;
import io.erda.fabric.EndpointOptions;
import io.erda.fabric.Fabric;
import io.erda.fabric.FabricCapabilities;
import io.erda.fabric.FabricException;
import io.erda.fabric.FaultInjectingEndpoint;
import io.erda.fabric.Listener;
import io.erda.fabric.MemoryRegion;
import io.erda.fabric.Opcode;
import io.erda.fabric.RecvRequest;
import io.erda.fabric.RegisterOptions;
import io.erda.fabric.Status;
import io.erda.fabric.SyncEndpoint;
import io.erda.fabric.UnfencedWrites;
import io.erda.fabric.WorkRequest;
import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.VarHandle;
import java.net.URI;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.EnumSet;
import java.util.List;
import java.util.Map;
import java.util.OptionalInt;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;
import org.junit.jupiter.params.provider.MethodSource;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * The fabric conformance suite: every provider runs it (one subclass per provider). A "target" fabric listens
 * and owns file-backed memory (as the server's PM); an "initiator" fabric connects and works on it. Only SPI calls
 * are used, plus the hooks below; every wait is bounded, so a hang fails a test instead of blocking the build.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
public abstract class FabricConformanceTest {

    /** How long any single completion may take before the test counts it as a hang. */
    protected static final long WAIT_SECONDS = 10;

    @TempDir
    protected Path tempDir;

    protected Fabric target;
    protected Fabric initiator;
    protected Listener listener;
    protected final Arena arena = Arena.ofShared();
    private final List<AutoCloseable> closeables = new CopyOnWriteArrayList<>();

    /** The URI the target listens on (tcp: port 0 on loopback; shm: a directory under {@code tempDir}). */
    protected abstract URI listenUri(Path tempDir);

    /** Properties given to {@link Fabric#open(URI, Map)} for both fabrics. */
    protected Map<String, String> fabricProperties() {
        return Map.of();
    }

    /**
     * The queue pairs this process holds, where the provider has them (verbs: counted by the kernel for a real
     * device, by the fabrics for the software RNIC); empty for providers without QPs.
     */
    protected OptionalInt liveQueuePairs() {
        return OptionalInt.empty();
    }

    /** Opens a fabric instance for the provider under test. */
    protected Fabric openFabric(URI uri) {
        return Fabric.open(uri, fabricProperties());
    }

    @BeforeEach
    void openFabrics() {
        URI uri = listenUri(tempDir);
        target = openFabric(uri);
        initiator = openFabric(uri);
        listener = target.listen(uri);
    }

    @AfterEach
    void closeFabrics() throws Exception {
        for (int i = closeables.size() - 1; i >= 0; i--) {
            closeables.get(i).close();
        }
        listener.close();
        initiator.close();
        target.close();
        arena.close();
    }

    protected <T extends AutoCloseable> T closeLater(T c) {
        closeables.add(c);
        return c;
    }

    // ------------------------------------------------------------------ helpers

    /** File-backed memory registered on the target (what a server does with a PM region). */
    protected MemoryRegion targetMemory(long size, Set<Access> access) throws IOException {
        return targetMemory(size, RegisterOptions.of(access));
    }

    protected MemoryRegion targetMemory(long size, RegisterOptions options) throws IOException {
        Path file = Files.createTempFile(tempDir, "region", ".pm");
        MemorySegment segment;
        try (FileChannel ch = FileChannel.open(file, StandardOpenOption.READ, StandardOpenOption.WRITE)) {
            ch.truncate(size);
            segment = ch.map(FileChannel.MapMode.READ_WRITE, 0, size, arena);
        }
        return target.register(segment, options.withBacking(new Backing(file, 0)));
    }

    /** Anonymous memory registered on the initiator for local use. */
    protected MemoryRegion initiatorBuffer(long size) {
        return initiator.registerLocal(arena.allocate(size, 64));
    }

    protected MemoryRegion targetBuffer(long size) {
        return target.registerLocal(arena.allocate(size, 64));
    }

    /** Connects an initiator endpoint to the target; returns {initiator side, target side}. */
    protected Endpoint[] connectPair() throws InterruptedException {
        return connectPair(EndpointOptions.defaults(), EndpointOptions.defaults(), server -> { });
    }

    /**
     * Connects with the given options; {@code beforeAccept} runs on the target endpoint before it is accepted
     * (the place to post receives).
     */
    protected Endpoint[] connectPair(EndpointOptions clientOptions, EndpointOptions serverOptions,
                                     Consumer<Endpoint> beforeAccept) throws InterruptedException {
        Endpoint client = closeLater(initiator.createEndpoint(clientOptions));
        Thread connector = Thread.ofPlatform().start(() -> client.connect(listener.uri(), new byte[] {1, 2, 3}));
        ConnectionRequest request = listener.accept(WAIT_SECONDS, TimeUnit.SECONDS);
        assertThat(request).as("connection request").isNotNull();
        assertThat(request.privateData()).containsExactly(1, 2, 3);
        Endpoint server = closeLater(target.createEndpoint(serverOptions));
        beforeAccept.accept(server);
        request.accept(server, new byte[] {9});
        connector.join(WAIT_SECONDS * 1000);
        assertThat(client.state()).isEqualTo(Endpoint.State.CONNECTED);
        assertThat(client.peerPrivateData()).containsExactly(9);
        return new Endpoint[] {client, server};
    }

    protected static Completion await(CompletionQueue cq) throws InterruptedException {
        Completion c = cq.take(WAIT_SECONDS, TimeUnit.SECONDS);
        assertThat(c).as("a completion within " + WAIT_SECONDS + " s").isNotNull();
        return c;
    }

    protected static void awaitState(Endpoint e, Endpoint.State wanted) throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(WAIT_SECONDS);
        while (e.state() != wanted && System.nanoTime() < deadline) {
            Thread.sleep(2);
        }
        assertThat(e.state()).isEqualTo(wanted);
    }

    protected static void fill(MemorySegment s, long offset, long length, int seed) {
        for (long i = 0; i < length; i++) {
            s.set(ValueLayout.JAVA_BYTE, offset + i, (byte) (seed + i * 31 + (i >>> 8)));
        }
    }

    protected static byte[] bytes(MemorySegment s, long offset, long length) {
        return s.asSlice(offset, length).toArray(ValueLayout.JAVA_BYTE);
    }

    private static final VarHandle WORD = ValueLayout.JAVA_LONG.varHandle();

    /**
     * True when the fabric executes ATOMIC_WRITE. Otherwise asserts what a device without it must do: posting one
     * is refused with a FabricException that names the device and the capability, nothing reaches the target, and
     * the connection stays up; the caller then has nothing more to check.
     */
    protected boolean atomicWriteExecutedElseRefusedByName() throws Exception {
        FabricCapabilities caps = initiator.capabilities();
        if (caps.atomicWrite()) {
            return true;
        }
        MemoryRegion remote = targetMemory(4096, Access.all());
        remote.segment().set(ValueLayout.JAVA_LONG, 0, 41L);
        Endpoint[] pair = connectPair();
        assertThatThrownBy(() -> pair[0].post(WorkRequest.atomicWrite(1, remote.address(), remote.rkey(), 1)))
                .isInstanceOf(FabricException.class)
                .hasMessageContaining("ATOMIC_WRITE is not supported by " + caps.device())
                .hasMessageContaining("lacks");
        assertThat(pair[0].state()).isEqualTo(Endpoint.State.CONNECTED);
        try (SyncEndpoint sync = new SyncEndpoint(pair[0])) {
            MemoryRegion local = initiatorBuffer(64);
            sync.read(local, 0, 8, remote.address(), remote.rkey());
            assertThat(local.segment().get(ValueLayout.JAVA_LONG, 0)).isEqualTo(41L);
        }
        return false;
    }

    // ------------------------------------------------------------------ every verb

    @Test
    void writeThenReadReturnsTheWrittenBytes() throws Exception {
        MemoryRegion remote = targetMemory(4096, Access.all());
        MemoryRegion local = initiatorBuffer(4096);
        Endpoint[] pair = connectPair();
        try (SyncEndpoint sync = new SyncEndpoint(pair[0])) {
            for (int i = 0; i < 64; i++) {
                local.segment().set(ValueLayout.JAVA_BYTE, i, (byte) (i * 7 + 1));
            }
            sync.write(local, 0, 64, remote.address() + 128, remote.rkey());
            sync.read(local, 1024, 64, remote.address() + 128, remote.rkey());
            assertThat(bytes(local.segment(), 1024, 64)).containsExactly(bytes(local.segment(), 0, 64));
            assertThat(remote.segment().get(ValueLayout.JAVA_BYTE, 128 + 5)).isEqualTo((byte) 36);
        }
    }

    @Test
    void startedWriteLandsWhileTheCallerWritesElsewhereAndIsAwaitedOnce() throws Exception {
        MemoryRegion remote = targetMemory(4096, Access.all());
        MemoryRegion local = initiatorBuffer(4096);
        Endpoint[] first = connectPair();
        Endpoint[] second = connectPair();
        try (SyncEndpoint a = new SyncEndpoint(first[0]); SyncEndpoint b = new SyncEndpoint(second[0])) {
            fill(local.segment(), 0, 256, 11);
            SyncEndpoint.Pending pending = a.startWrite(local, 0, 128, remote.address(), remote.rkey());
            b.write(local, 128, 128, remote.address() + 1024, remote.rkey()); // another connection meanwhile
            pending.await();
            assertThat(bytes(remote.segment(), 0, 128)).containsExactly(bytes(local.segment(), 0, 128));
            assertThat(bytes(remote.segment(), 1024, 128)).containsExactly(bytes(local.segment(), 128, 128));
            assertThatThrownBy(pending::await).isInstanceOf(IllegalStateException.class).hasMessageContaining("already");
            a.read(local, 2048, 128, remote.address(), remote.rkey()); // the endpoint's queue is in step again
            assertThat(bytes(local.segment(), 2048, 128)).containsExactly(bytes(local.segment(), 0, 128));
        }
    }

    @Test
    void readReturnsWhatTheTargetStoredLocally() throws Exception {
        MemoryRegion remote = targetMemory(8192, Access.all());
        fill(remote.segment(), 0, 8192, 5);
        MemoryRegion local = initiatorBuffer(8192);
        Endpoint[] pair = connectPair();
        try (SyncEndpoint sync = new SyncEndpoint(pair[0])) {
            sync.read(local, 0, 8192, remote.address(), remote.rkey());
            assertThat(bytes(local.segment(), 0, 8192)).containsExactly(bytes(remote.segment(), 0, 8192));
        }
    }

    @ParameterizedTest
    @ValueSource(ints = {1, 63, 64, 4096, 65537, 1 << 20})
    void transfersOfEverySizeArriveIntact(int size) throws Exception {
        MemoryRegion remote = targetMemory((1 << 20) + 4096, Access.all());
        MemoryRegion local = initiatorBuffer(2L * size + 64);
        fill(local.segment(), 0, size, size);
        Endpoint[] pair = connectPair();
        try (SyncEndpoint sync = new SyncEndpoint(pair[0])) {
            long at = remote.address() + 3; // unaligned on purpose
            sync.write(local, 0, size, at, remote.rkey());
            assertThat(bytes(remote.segment(), 3, size)).containsExactly(bytes(local.segment(), 0, size));
            sync.read(local, size + 64, size, at, remote.rkey());
            assertThat(bytes(local.segment(), size + 64, size)).containsExactly(bytes(local.segment(), 0, size));
        }
    }

    @Test
    void writeWithImmPlacesTheDataAndDeliversTheImmInTheTargetsReceiveCompletion() throws Exception {
        MemoryRegion remote = targetMemory(4096, Access.all());
        MemoryRegion recvBuf = targetBuffer(64);
        MemoryRegion local = initiatorBuffer(256);
        fill(local.segment(), 0, 100, 9);
        Endpoint[] pair = connectPair(EndpointOptions.defaults(), EndpointOptions.defaults(),
                server -> server.postRecv(new RecvRequest(77, recvBuf, 0, 64)));
        pair[0].post(WorkRequest.writeWithImm(1, local, 0, 100, remote.address() + 512, remote.rkey(), 0xCAFEBABE));
        Completion sent = await(pair[0].sendQueue());
        assertThat(sent.status()).isEqualTo(Status.SUCCESS);
        assertThat(sent.opcode()).isEqualTo(Opcode.WRITE_WITH_IMM);
        Completion received = await(pair[1].recvQueue());
        assertThat(received.status()).isEqualTo(Status.SUCCESS);
        assertThat(received.wrId()).isEqualTo(77);
        assertThat(received.opcode()).isEqualTo(Opcode.RECV_WITH_IMM);
        assertThat(received.hasImm()).isTrue();
        assertThat(received.immData()).isEqualTo(0xCAFEBABE);
        assertThat(received.byteLength()).isEqualTo(100);
        assertThat(bytes(remote.segment(), 512, 100)).containsExactly(bytes(local.segment(), 0, 100));
    }

    @Test
    void sendLandsInThePostedReceivesInOrderWithTheirByteCounts() throws Exception {
        MemoryRegion recvBuf = targetBuffer(1024);
        MemoryRegion local = initiatorBuffer(1024);
        fill(local.segment(), 0, 1024, 3);
        Endpoint[] pair = connectPair(EndpointOptions.defaults(), EndpointOptions.defaults(), server -> {
            server.postRecv(new RecvRequest(1, recvBuf, 0, 512));
            server.postRecv(new RecvRequest(2, recvBuf, 512, 512));
        });
        try (SyncEndpoint sync = new SyncEndpoint(pair[0])) {
            sync.send(local, 0, 37);
            sync.send(local, 100, 512);
        }
        Completion first = await(pair[1].recvQueue());
        Completion second = await(pair[1].recvQueue());
        assertThat(first.wrId()).isEqualTo(1);
        assertThat(first.opcode()).isEqualTo(Opcode.RECV);
        assertThat(first.byteLength()).isEqualTo(37);
        assertThat(second.wrId()).isEqualTo(2);
        assertThat(second.byteLength()).isEqualTo(512);
        assertThat(bytes(recvBuf.segment(), 0, 37)).containsExactly(bytes(local.segment(), 0, 37));
        assertThat(bytes(recvBuf.segment(), 512, 512)).containsExactly(bytes(local.segment(), 100, 512));
    }

    @Test
    void targetCanSendToTheInitiatorOverTheSameConnection() throws Exception {
        MemoryRegion clientRecv = initiatorBuffer(128);
        MemoryRegion serverSend = targetBuffer(128);
        fill(serverSend.segment(), 0, 128, 1);
        Endpoint[] pair = connectPair();
        pair[0].postRecv(new RecvRequest(5, clientRecv, 0, 128));
        try (SyncEndpoint sync = new SyncEndpoint(pair[1])) {
            sync.send(serverSend, 0, 128);
        }
        Completion c = await(pair[0].recvQueue());
        assertThat(c.isSuccess()).isTrue();
        assertThat(c.byteLength()).isEqualTo(128);
        assertThat(bytes(clientRecv.segment(), 0, 128)).containsExactly(bytes(serverSend.segment(), 0, 128));
    }

    @Test
    void compareAndSwapSwapsWhenTheExpectedValueMatchesAndReturnsTheOldValue() throws Exception {
        MemoryRegion remote = targetMemory(4096, Access.all());
        remote.segment().set(ValueLayout.JAVA_LONG, 64, 41L);
        Endpoint[] pair = connectPair();
        try (SyncEndpoint sync = new SyncEndpoint(pair[0])) {
            assertThat(sync.compareAndSwap(remote.address() + 64, remote.rkey(), 41L, 42L)).isEqualTo(41L);
        }
        assertThat(remote.segment().get(ValueLayout.JAVA_LONG, 64)).isEqualTo(42L);
    }

    @Test
    void compareAndSwapLeavesTheWordWhenTheExpectedValueDiffersAndReturnsTheCurrentValue() throws Exception {
        MemoryRegion remote = targetMemory(4096, Access.all());
        remote.segment().set(ValueLayout.JAVA_LONG, 64, 7L);
        Endpoint[] pair = connectPair();
        try (SyncEndpoint sync = new SyncEndpoint(pair[0])) {
            assertThat(sync.compareAndSwap(remote.address() + 64, remote.rkey(), 41L, 42L)).isEqualTo(7L);
        }
        assertThat(remote.segment().get(ValueLayout.JAVA_LONG, 64)).isEqualTo(7L);
    }

    @Test
    void fetchAddAddsAndReturnsThePreviousValue() throws Exception {
        MemoryRegion remote = targetMemory(4096, Access.all());
        remote.segment().set(ValueLayout.JAVA_LONG, 8, 100L);
        Endpoint[] pair = connectPair();
        try (SyncEndpoint sync = new SyncEndpoint(pair[0])) {
            assertThat(sync.fetchAdd(remote.address() + 8, remote.rkey(), 5)).isEqualTo(100L);
            assertThat(sync.fetchAdd(remote.address() + 8, remote.rkey(), -1)).isEqualTo(105L);
        }
        assertThat(remote.segment().get(ValueLayout.JAVA_LONG, 8)).isEqualTo(104L);
    }

    /**
     * {@link Fabric#posted}: each request posted is counted once on the initiator's fabric, by the operation the
     * device executes (a FLUSH the device cannot do natively is the READ that stands in for it); receives and the
     * target's side count nothing.
     */
    @Test
    void postedCountsEachRequestOnceByTheOperationTheDeviceExecutes() throws Exception {
        MemoryRegion remote = targetMemory(4096, Access.all());
        MemoryRegion local = initiatorBuffer(4096);
        Endpoint[] pair = connectPair();
        boolean atomics = initiator.capabilities().atomicity() != FabricCapabilities.Atomicity.NONE;
        boolean nativeFlush = initiator.capabilities().nativeFlush();
        Map<Opcode, Long> before = initiator.posted();
        Map<Opcode, Long> targetBefore = target.posted();
        try (SyncEndpoint sync = new SyncEndpoint(pair[0])) {
            for (int i = 0; i < 3; i++) {
                sync.write(local, 0, 256, remote.address() + 256L * i, remote.rkey());
            }
            sync.read(local, 0, 512, remote.address(), remote.rkey());
            sync.read(local, 512, 8, remote.address() + 1024, remote.rkey());
            if (atomics) {
                sync.compareAndSwap(remote.address() + 2048, remote.rkey(), 0, 1);
            }
            sync.flush(remote.address(), 768, remote.rkey());
        }
        Map<Opcode, Long> after = initiator.posted();
        Map<Opcode, Long> expected = new java.util.EnumMap<>(Opcode.class);
        for (Opcode op : Opcode.values()) {
            expected.put(op, 0L);
        }
        expected.put(Opcode.WRITE, 3L);
        expected.put(Opcode.READ, nativeFlush ? 2L : 3L);
        expected.put(Opcode.FLUSH, nativeFlush ? 1L : 0L);
        expected.put(Opcode.CAS, atomics ? 1L : 0L);
        Map<Opcode, Long> counted = new java.util.EnumMap<>(Opcode.class);
        for (Opcode op : Opcode.values()) {
            counted.put(op, after.get(op) - before.get(op));
        }
        assertThat(counted).as("posted by the initiator (native FLUSH %s, atomics %s)", nativeFlush, atomics)
                .isEqualTo(expected);
        assertThat(target.posted()).as("the target posted nothing").isEqualTo(targetBefore);
    }

    @Test
    void flushAfterWritesCompletesWithTheWritesInTheBackingFile() throws Exception {
        MemoryRegion remote = targetMemory(8192, Access.all());
        MemoryRegion local = initiatorBuffer(4096);
        fill(local.segment(), 0, 4096, 11);
        Endpoint[] pair = connectPair();
        try (SyncEndpoint sync = new SyncEndpoint(pair[0])) {
            sync.write(local, 0, 4096, remote.address() + 4096, remote.rkey());
            sync.flush(remote.address() + 4096, 4096, remote.rkey());
        }
        byte[] file = Files.readAllBytes(remote.options().backing().file());
        assertThat(Arrays.copyOfRange(file, 4096, 8192)).containsExactly(bytes(local.segment(), 0, 4096));
    }

    @Test
    void atomicWriteReplacesExactlyTheAddressedWord() throws Exception {
        if (!atomicWriteExecutedElseRefusedByName()) {
            return;
        }
        MemoryRegion remote = targetMemory(4096, Access.all());
        remote.segment().set(ValueLayout.JAVA_LONG, 56, 1L);
        remote.segment().set(ValueLayout.JAVA_LONG, 64, 2L);
        remote.segment().set(ValueLayout.JAVA_LONG, 72, 3L);
        Endpoint[] pair = connectPair();
        try (SyncEndpoint sync = new SyncEndpoint(pair[0])) {
            sync.atomicWrite(remote.address() + 64, remote.rkey(), 0x0123_4567_89AB_CDEFL);
        }
        assertThat(remote.segment().get(ValueLayout.JAVA_LONG, 64)).isEqualTo(0x0123_4567_89AB_CDEFL);
        assertThat(remote.segment().get(ValueLayout.JAVA_LONG, 56)).isEqualTo(1L);
        assertThat(remote.segment().get(ValueLayout.JAVA_LONG, 72)).isEqualTo(3L);
    }

    @Test
    void atomicWriteCompletesAsAtomicWriteWithoutALocalBuffer() throws Exception {
        if (!atomicWriteExecutedElseRefusedByName()) {
            return;
        }
        MemoryRegion remote = targetMemory(4096, Access.all());
        Endpoint[] pair = connectPair();
        pair[0].post(WorkRequest.atomicWrite(31, remote.address() + 8, remote.rkey(), -1L));
        Completion c = await(pair[0].sendQueue());
        assertThat(c.wrId()).isEqualTo(31);
        assertThat(c.status()).isEqualTo(Status.SUCCESS);
        assertThat(c.opcode()).isEqualTo(Opcode.ATOMIC_WRITE);
        assertThat(remote.segment().get(ValueLayout.JAVA_LONG, 8)).isEqualTo(-1L);
    }

    @Test
    void targetReadersNeverSeeATornAtomicWrite() throws Exception {
        if (!atomicWriteExecutedElseRefusedByName()) {
            return;
        }
        MemoryRegion remote = targetMemory(4096, Access.all());
        long even = 0x5555_5555_5555_5555L;
        long odd = 0xAAAA_AAAA_AAAA_AAAAL;
        remote.segment().set(ValueLayout.JAVA_LONG, 0, even);
        Endpoint[] pair = connectPair();
        int writes = 2000;
        Set<Long> seen = ConcurrentHashMap.newKeySet();
        java.util.concurrent.atomic.AtomicBoolean done = new java.util.concurrent.atomic.AtomicBoolean();
        Thread reader = Thread.ofPlatform().start(() -> {
            while (!done.get()) {
                seen.add((long) WORD.getVolatile(remote.segment(), 0L));
            }
        });
        try (SyncEndpoint sync = new SyncEndpoint(pair[0])) {
            for (int i = 0; i < writes; i++) {
                sync.atomicWrite(remote.address(), remote.rkey(), i % 2 == 0 ? odd : even);
            }
        } finally {
            done.set(true);
            reader.join(WAIT_SECONDS * 1000);
        }
        assertThat(seen).isSubsetOf(even, odd);
        assertThat((long) WORD.getVolatile(remote.segment(), 0L)).isEqualTo(even);
    }

    /**
     * GLOBAL atomicity (verbs: IBV_ATOMIC_GLOB; the software providers): remote adds interleaved with the target
     * CPU's own atomic adds on the same word lose nothing. A device that declares only DEVICE atomicity
     * (IBV_ATOMIC_HCA, rxe among them) promises this only among remote atomics: there, adds from two connections
     * at once must lose nothing, and no CPU atomic may touch the word (the Erda store never mixes the two).
     */
    @Test
    void atomicsAreAtomicAgainstWhatTheDeviceDeclares() throws Exception {
        FabricCapabilities.Atomicity atomicity = initiator.capabilities().atomicity();
        assertThat(atomicity).isNotEqualTo(FabricCapabilities.Atomicity.NONE);
        if (atomicity == FabricCapabilities.Atomicity.DEVICE) {
            remoteAtomicsFromTwoConnectionsLoseNothing();
            return;
        }
        MemoryRegion remote = targetMemory(4096, Access.all());
        Endpoint[] pair = connectPair();
        int remoteAdds = 2000;
        int localAdds = 50_000;
        Thread local = Thread.ofPlatform().start(() -> {
            for (int i = 0; i < localAdds; i++) {
                WORD.getAndAdd(remote.segment(), 0L, 1L);
            }
        });
        try (SyncEndpoint sync = new SyncEndpoint(pair[0])) {
            for (int i = 0; i < remoteAdds; i++) {
                sync.fetchAdd(remote.address(), remote.rkey(), 1);
            }
        }
        local.join(WAIT_SECONDS * 1000);
        assertThat((long) WORD.getVolatile(remote.segment(), 0L)).isEqualTo(remoteAdds + localAdds);
    }

    /**
     * The store's discipline for its atomic words (docs/one-sided-put.md, [word-cas]): the target changes a word by CAS
     * while initiators CAS it remotely, and no increment may be lost. The target's CAS through its own device (a
     * loopback connection of the target's fabric to itself) is a remote atomic like the initiator's, so it holds on
     * every device with atomics; the target CPU's CAS joins only where atomicity is GLOBAL (on DEVICE, IBV_ATOMIC_HCA
     * as rxe reports, the store must take the loopback path).
     */
    @Test
    void targetCasesAndRemoteCasesOnOneWordLoseNothing() throws Exception {
        FabricCapabilities.Atomicity atomicity = target.capabilities().atomicity();
        assertThat(atomicity).isNotEqualTo(FabricCapabilities.Atomicity.NONE);
        boolean cpuToo = atomicity == FabricCapabilities.Atomicity.GLOBAL;
        MemoryRegion remote = targetMemory(4096, Access.all());
        Endpoint[] pair = connectPair();
        Endpoint[] loopback = connectLoopback();
        int increments = 1000;
        Thread targetSide = Thread.ofPlatform().start(() -> {
            try (SyncEndpoint self = new SyncEndpoint(loopback[0])) {
                for (int i = 0; i < increments; i++) {
                    casIncrement(self, remote);
                    if (cpuToo) {
                        for (long v = (long) WORD.getVolatile(remote.segment(), 0L);
                             !WORD.compareAndSet(remote.segment(), 0L, v, v + 1); v = (long) WORD.getVolatile(remote.segment(), 0L)) {
                            Thread.onSpinWait();
                        }
                    }
                }
            }
        });
        try (SyncEndpoint sync = new SyncEndpoint(pair[0])) {
            for (int i = 0; i < increments; i++) {
                casIncrement(sync, remote);
            }
        }
        targetSide.join(WAIT_SECONDS * 1000);
        assertThat(targetSide.isAlive()).isFalse();
        assertThat((long) WORD.getVolatile(remote.segment(), 0L)).as("increments by CAS, none lost (%s)", atomicity)
                .isEqualTo((cpuToo ? 3L : 2L) * increments);
    }

    /** Adds one to the word at the start of {@code region} with remote CASes, retrying from the value each lost CAS saw. */
    private static void casIncrement(SyncEndpoint sync, MemoryRegion region) {
        long guess = 0;
        for (long seen; (seen = sync.compareAndSwap(region.address(), region.rkey(), guess, guess + 1)) != guess; ) {
            guess = seen;
        }
    }

    /** A connection of the target's fabric to its own listener: the target issues remote operations on its own memory. */
    protected Endpoint[] connectLoopback() throws InterruptedException {
        Endpoint self = closeLater(target.createEndpoint(EndpointOptions.defaults()));
        Thread connector = Thread.ofPlatform().start(() -> self.connect(listener.uri(), new byte[] {4}));
        ConnectionRequest request = listener.accept(WAIT_SECONDS, TimeUnit.SECONDS);
        assertThat(request).as("loopback connection request").isNotNull();
        Endpoint server = closeLater(target.createEndpoint(EndpointOptions.defaults()));
        request.accept(server, new byte[] {5});
        connector.join(WAIT_SECONDS * 1000);
        assertThat(self.state()).isEqualTo(Endpoint.State.CONNECTED);
        return new Endpoint[] {self, server};
    }

    private void remoteAtomicsFromTwoConnectionsLoseNothing() throws Exception {
        MemoryRegion remote = targetMemory(4096, Access.all());
        Endpoint[] first = connectPair();
        Endpoint[] second = connectPair();
        int adds = 2000;
        Thread other = Thread.ofPlatform().start(() -> {
            try (SyncEndpoint sync = new SyncEndpoint(second[0])) {
                for (int i = 0; i < adds; i++) {
                    sync.fetchAdd(remote.address(), remote.rkey(), 1);
                }
            }
        });
        try (SyncEndpoint sync = new SyncEndpoint(first[0])) {
            for (int i = 0; i < adds; i++) {
                sync.compareAndSwap(remote.address() + 8, remote.rkey(), i, i + 1); // a CAS chain on a second word
                sync.fetchAdd(remote.address(), remote.rkey(), 1);
            }
        }
        other.join(WAIT_SECONDS * 1000);
        assertThat((long) WORD.getVolatile(remote.segment(), 0L)).isEqualTo(2L * adds);
        assertThat((long) WORD.getVolatile(remote.segment(), 8L)).isEqualTo(adds);
    }

    private static void postRetryingWhileFull(Endpoint endpoint, WorkRequest request) throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(WAIT_SECONDS);
        while (true) {
            try {
                endpoint.post(request);
                return;
            } catch (FabricException e) {
                if (!e.getMessage().startsWith("send queue full") || System.nanoTime() > deadline) {
                    throw e;
                }
                Thread.sleep(1);
            }
        }
    }

    // ------------------------------------------------------------------ signalling and ordering

    @Test
    void unsignaledSuccessesProduceNoCompletion() throws Exception {
        MemoryRegion remote = targetMemory(4096, Access.all());
        MemoryRegion local = initiatorBuffer(4096);
        fill(local.segment(), 0, 1024, 2);
        Endpoint[] pair = connectPair();
        for (int i = 0; i < 10; i++) {
            pair[0].post(WorkRequest.write(i, local, i * 64L, 64, remote.address() + i * 64L, remote.rkey()).unsignaled());
        }
        pair[0].post(WorkRequest.read(99, local, 2048, 640, remote.address(), remote.rkey()));
        Completion c = await(pair[0].sendQueue());
        assertThat(c.wrId()).isEqualTo(99);
        assertThat(c.status()).isEqualTo(Status.SUCCESS);
        assertThat(pair[0].sendQueue().poll()).isNull();
        assertThat(bytes(local.segment(), 2048, 640)).containsExactly(bytes(local.segment(), 0, 640));
    }

    /**
     * executeNow: a READ and a WRITE either finish on the calling thread (true, nothing queued for them) or complete on
     * the send queue as posted ones do; which one is the provider's choice (shm's own test says when it must finish).
     */
    @Test
    void executeNowFinishesAtOnceOrCompletesOnTheQueue() throws Exception {
        MemoryRegion remote = targetMemory(4096, Access.all());
        MemoryRegion local = initiatorBuffer(4096);
        Endpoint[] pair = connectPair();
        local.segment().asSlice(0, 256).fill((byte) 7);
        executeNowOrAwait(pair[0], WorkRequest.write(41, local, 0, 256, remote.address() + 512, remote.rkey()));
        executeNowOrAwait(pair[0], WorkRequest.read(42, local, 1024, 256, remote.address() + 512, remote.rkey()));
        assertThat(bytes(local.segment(), 1024, 256)).containsExactly(bytes(local.segment(), 0, 256));
        assertThat(pair[0].sendQueue().poll()).isNull();
    }

    /** A failed executeNow is never "done": its error completes on the send queue as a posted request's does. */
    @Test
    void executeNowOfAFailingReadCompletesWithItsErrorOnTheQueue() throws Exception {
        MemoryRegion local = initiatorBuffer(64);
        Endpoint[] pair = connectPair();
        assertThat(pair[0].executeNow(WorkRequest.read(17, local, 0, 8, 0x1000, 0x7fff_fff0))).isFalse();
        Completion c = await(pair[0].sendQueue());
        assertThat(c.wrId()).isEqualTo(17);
        assertThat(c.status()).isEqualTo(Status.REMOTE_ACCESS_ERROR);
    }

    /** executeNow as SyncEndpoint uses it: true, or a successful completion of this request on the queue. */
    protected static void executeNowOrAwait(Endpoint e, WorkRequest request) throws InterruptedException {
        if (!e.executeNow(request)) {
            Completion c = await(e.sendQueue());
            assertThat(c.wrId()).isEqualTo(request.wrId());
            assertThat(c.status()).isEqualTo(Status.SUCCESS);
        }
    }

    @Test
    void unsignaledRequestThatFailsStillCompletes() throws Exception {
        MemoryRegion local = initiatorBuffer(64);
        Endpoint[] pair = connectPair();
        pair[0].post(WorkRequest.write(13, local, 0, 8, 0x1000, 0x7fff_fff0).unsignaled());
        Completion c = await(pair[0].sendQueue());
        assertThat(c.wrId()).isEqualTo(13);
        assertThat(c.status()).isEqualTo(Status.REMOTE_ACCESS_ERROR);
    }

    @Test
    void completionsArriveInPostingOrder() throws Exception {
        MemoryRegion remote = targetMemory(64 * 1024, Access.all());
        MemoryRegion local = initiatorBuffer(64 * 1024);
        Endpoint[] pair = connectPair();
        int n = 200;
        for (int i = 0; i < n; i++) {
            WorkRequest wr = switch (i % 3) {
                case 0 -> WorkRequest.write(i, local, 0, 1000, remote.address() + 8192, remote.rkey());
                case 1 -> WorkRequest.read(i, local, 16384, 3000, remote.address() + 8192, remote.rkey());
                default -> WorkRequest.fetchAdd(i, local, 8 * (i % 64), remote.address(), remote.rkey(), 1);
            };
            pair[0].post(wr);
        }
        for (int i = 0; i < n; i++) {
            Completion c = await(pair[0].sendQueue());
            assertThat(c.status()).as("wr %d", i).isEqualTo(Status.SUCCESS);
            assertThat(c.wrId()).isEqualTo(i);
        }
        assertThat(remote.segment().get(ValueLayout.JAVA_LONG, 0)).isEqualTo(n / 3);
    }

    @ParameterizedTest
    @EnumSource(value = Opcode.class, names = {"READ", "FLUSH", "CAS", "FETCH_ADD", "ATOMIC_WRITE"})
    void completionOfAReadFlushOrAtomicImpliesEveryEarlierWriteIsVisible(Opcode closer) throws Exception {
        if (closer == Opcode.ATOMIC_WRITE && !atomicWriteExecutedElseRefusedByName()) {
            return;
        }
        int writes = 200;
        int size = 256;
        MemoryRegion remote = targetMemory((long) writes * size + 64, Access.all());
        MemoryRegion local = initiatorBuffer((long) writes * size + 64);
        fill(local.segment(), 0, (long) writes * size, 17);
        Endpoint[] pair = connectPair();
        for (int i = 0; i < writes; i++) {
            pair[0].post(WorkRequest.write(i, local, (long) i * size, size, remote.address() + (long) i * size, remote.rkey())
                    .unsignaled());
        }
        long last = remote.address() + (long) (writes - 1) * size;
        long word = remote.address() + (long) writes * size;
        long resultAt = (long) writes * size;
        pair[0].post(switch (closer) {
            case READ -> WorkRequest.read(1000, local, resultAt, 8, last, remote.rkey());
            case FLUSH -> WorkRequest.flush(1000, remote.address(), writes * size, remote.rkey());
            case CAS -> WorkRequest.compareAndSwap(1000, local, resultAt, word, remote.rkey(), 0, 1);
            case ATOMIC_WRITE -> WorkRequest.atomicWrite(1000, word, remote.rkey(), 1);
            default -> WorkRequest.fetchAdd(1000, local, resultAt, word, remote.rkey(), 1);
        });
        Completion c = await(pair[0].sendQueue());
        assertThat(c.wrId()).isEqualTo(1000);
        assertThat(c.status()).isEqualTo(Status.SUCCESS);
        assertThat(bytes(remote.segment(), 0, (long) writes * size)).containsExactly(bytes(local.segment(), 0, (long) writes * size));
        if (closer == Opcode.READ) {
            assertThat(bytes(local.segment(), resultAt, 8)).containsExactly(bytes(local.segment(), (long) (writes - 1) * size, 8));
        }
    }

    // ------------------------------------------------------------------ access checks

    /** An access that must be refused: region rights, opcode, offset from the region start and length. */
    record Violation(String name, Set<Access> regionAccess, Opcode opcode, long offset, int length, Status expected) {
        @Override
        public String toString() {
            return name;
        }
    }

    static Stream<Violation> violations() {
        Set<Access> all = Access.all();
        return Stream.of(
                new Violation("write one byte past the end", all, Opcode.WRITE, 4096 - 63, 64, Status.REMOTE_ACCESS_ERROR),
                new Violation("read one byte past the end", all, Opcode.READ, 4096 - 63, 64, Status.REMOTE_ACCESS_ERROR),
                new Violation("write one byte before the start", all, Opcode.WRITE, -1, 8, Status.REMOTE_ACCESS_ERROR),
                new Violation("atomic past the end", all, Opcode.FETCH_ADD, 4096, 8, Status.REMOTE_ACCESS_ERROR),
                new Violation("write without REMOTE_WRITE", EnumSet.of(Access.REMOTE_READ, Access.REMOTE_ATOMIC),
                        Opcode.WRITE, 0, 64, Status.REMOTE_ACCESS_ERROR),
                new Violation("write-with-imm without REMOTE_WRITE", EnumSet.of(Access.REMOTE_READ),
                        Opcode.WRITE_WITH_IMM, 0, 64, Status.REMOTE_ACCESS_ERROR),
                new Violation("read without REMOTE_READ", EnumSet.of(Access.REMOTE_WRITE, Access.REMOTE_ATOMIC),
                        Opcode.READ, 0, 64, Status.REMOTE_ACCESS_ERROR),
                new Violation("cas without REMOTE_ATOMIC", EnumSet.of(Access.REMOTE_READ, Access.REMOTE_WRITE),
                        Opcode.CAS, 0, 8, Status.REMOTE_ACCESS_ERROR),
                new Violation("fetch-add without REMOTE_ATOMIC", EnumSet.of(Access.REMOTE_READ, Access.REMOTE_WRITE),
                        Opcode.FETCH_ADD, 0, 8, Status.REMOTE_ACCESS_ERROR),
                new Violation("atomic write without REMOTE_WRITE", EnumSet.of(Access.REMOTE_READ, Access.REMOTE_ATOMIC),
                        Opcode.ATOMIC_WRITE, 0, 8, Status.REMOTE_ACCESS_ERROR),
                new Violation("atomic write past the end", all, Opcode.ATOMIC_WRITE, 4096, 8, Status.REMOTE_ACCESS_ERROR));
    }

    /**
     * A misaligned atomic is refused when the request is built, on every provider: devices differ (rxe fails
     * ibv_post_send with EINVAL, others complete it with an error that breaks the connection), so the SPI checks it
     * locally; nothing is sent and the connection stays up.
     */
    @ParameterizedTest
    @EnumSource(value = Opcode.class, names = {"CAS", "FETCH_ADD", "ATOMIC_WRITE"})
    void misalignedAtomicIsRefusedBeforeAnythingIsSentAndTheConnectionStaysUp(Opcode opcode) throws Exception {
        MemoryRegion remote = targetMemory(4096, Access.all());
        fill(remote.segment(), 0, 64, 0x5A);
        byte[] before = bytes(remote.segment(), 0, 64);
        MemoryRegion local = initiatorBuffer(64);
        Endpoint[] pair = connectPair();
        long at = remote.address() + 12;
        assertThatThrownBy(() -> pair[0].post(switch (opcode) {
            case CAS -> WorkRequest.compareAndSwap(1, local, 0, at, remote.rkey(), 0, 1);
            case FETCH_ADD -> WorkRequest.fetchAdd(1, local, 0, at, remote.rkey(), 1);
            default -> WorkRequest.atomicWrite(1, at, remote.rkey(), 1);
        })).isInstanceOf(IllegalArgumentException.class)
                .hasMessage(opcode + " remote address 0x" + Long.toHexString(at) + " is not 8-byte aligned");
        try (SyncEndpoint sync = new SyncEndpoint(pair[0])) {
            sync.read(local, 0, 64, remote.address(), remote.rkey());
        }
        assertThat(bytes(local.segment(), 0, 64)).containsExactly(before);
        assertThat(pair[0].state()).isEqualTo(Endpoint.State.CONNECTED);
    }

    @ParameterizedTest
    @MethodSource("violations")
    void refusedAccessFailsLeavesTargetMemoryUntouchedAndFlushesLaterRequests(Violation v) throws Exception {
        if (v.opcode() == Opcode.ATOMIC_WRITE && !atomicWriteExecutedElseRefusedByName()) {
            return;
        }
        MemoryRegion remote = targetMemory(4096, v.regionAccess());
        fill(remote.segment(), 0, 4096, 0x5A);
        byte[] before = bytes(remote.segment(), 0, 4096);
        MemoryRegion good = targetMemory(4096, Access.all());
        MemoryRegion recvBuf = targetBuffer(64);
        MemoryRegion local = initiatorBuffer(4096);
        fill(local.segment(), 0, 4096, 0x11);
        Endpoint[] pair = connectPair(EndpointOptions.defaults(), EndpointOptions.defaults(),
                server -> server.postRecv(new RecvRequest(1, recvBuf, 0, 64)));
        long at = remote.address() + v.offset();
        pair[0].post(switch (v.opcode()) {
            case WRITE -> WorkRequest.write(1, local, 0, v.length(), at, remote.rkey());
            case WRITE_WITH_IMM -> WorkRequest.writeWithImm(1, local, 0, v.length(), at, remote.rkey(), 1);
            case READ -> WorkRequest.read(1, local, 0, v.length(), at, remote.rkey());
            case CAS -> WorkRequest.compareAndSwap(1, local, 0, at, remote.rkey(), 0x5A5A5A5A5A5A5A5AL, 1);
            case ATOMIC_WRITE -> WorkRequest.atomicWrite(1, at, remote.rkey(), 1);
            default -> WorkRequest.fetchAdd(1, local, 0, at, remote.rkey(), 1);
        });
        pair[0].post(WorkRequest.write(2, local, 0, 64, good.address(), good.rkey()));
        pair[0].post(WorkRequest.read(3, local, 1024, 64, good.address(), good.rkey()));
        // a CAS after a failed request is not executed either: a one-sided PUT posts its WRITE unsignalled and then
        // the CAS that publishes it, so a WRITE refused must leave the word as it was
        pair[0].post(WorkRequest.compareAndSwap(4, local, 2048, good.address() + 64, good.rkey(), 0, 1));
        Completion failed = await(pair[0].sendQueue());
        assertThat(failed.wrId()).isEqualTo(1);
        if (v.expected() != null) {
            assertThat(failed.status()).isEqualTo(v.expected());
        } else {
            assertThat(failed.status()).isNotIn(Status.SUCCESS, Status.WR_FLUSH_ERROR);
        }
        for (int wr = 2; wr <= 4; wr++) {
            Completion flushed = await(pair[0].sendQueue());
            assertThat(flushed.wrId()).isEqualTo(wr);
            assertThat(flushed.status()).isEqualTo(Status.WR_FLUSH_ERROR);
        }
        assertThat(bytes(remote.segment(), 0, 4096)).as("target memory").containsExactly(before);
        assertThat(bytes(good.segment(), 0, 64)).as("the flushed write").containsOnly(0);
        assertThat(good.segment().get(ValueLayout.JAVA_LONG, 64)).as("the word of the flushed CAS").isZero();
        assertThat(pair[0].state()).isEqualTo(Endpoint.State.ERROR);
        awaitState(pair[1], Endpoint.State.ERROR);
    }

    @Test
    void unknownRkeyFailsWithRemoteAccessError() throws Exception {
        MemoryRegion remote = targetMemory(4096, Access.all());
        MemoryRegion local = initiatorBuffer(64);
        Endpoint[] pair = connectPair();
        pair[0].post(WorkRequest.read(1, local, 0, 8, remote.address(), remote.rkey() + 0x7777));
        Completion c = await(pair[0].sendQueue());
        assertThat(c.status()).isEqualTo(Status.REMOTE_ACCESS_ERROR);
        assertThat(c.detail()).isNotBlank();
    }

    @Test
    void deregisteredRegionFailsWithRemoteAccessErrorAndIsNotWritten() throws Exception {
        MemoryRegion remote = targetMemory(4096, Access.all());
        MemorySegment memory = remote.segment();
        MemoryRegion local = initiatorBuffer(64);
        fill(local.segment(), 0, 64, 1);
        Endpoint[] pair = connectPair();
        remote.close();
        pair[0].post(WorkRequest.write(1, local, 0, 64, memory.address(), remote.rkey()));
        Completion c = await(pair[0].sendQueue());
        assertThat(c.status()).isEqualTo(Status.REMOTE_ACCESS_ERROR);
        assertThat(bytes(memory, 0, 64)).containsOnly(0);
    }

    @Test
    void errorCompletionTakesThePeerToErrorAndFlushesItsPostedReceives() throws Exception {
        MemoryRegion recvBuf = targetBuffer(256);
        MemoryRegion local = initiatorBuffer(64);
        Endpoint[] pair = connectPair(EndpointOptions.defaults(), EndpointOptions.defaults(), server -> {
            for (int i = 0; i < 3; i++) {
                server.postRecv(new RecvRequest(i, recvBuf, i * 64L, 64));
            }
        });
        pair[0].post(WorkRequest.read(1, local, 0, 8, 0, 0x7fff_fff0));
        assertThat(await(pair[0].sendQueue()).status()).isEqualTo(Status.REMOTE_ACCESS_ERROR);
        for (int i = 0; i < 3; i++) {
            Completion c = await(pair[1].recvQueue());
            assertThat(c.wrId()).isEqualTo(i);
            assertThat(c.status()).isEqualTo(Status.WR_FLUSH_ERROR);
        }
        awaitState(pair[1], Endpoint.State.ERROR);
    }

    @Test
    void requestsPostedAfterAnErrorCompleteWithFlushError() throws Exception {
        MemoryRegion local = initiatorBuffer(64);
        Endpoint[] pair = connectPair();
        pair[0].post(WorkRequest.read(1, local, 0, 8, 0, 0x7fff_fff0));
        assertThat(await(pair[0].sendQueue()).isSuccess()).isFalse();
        pair[0].post(WorkRequest.read(2, local, 0, 8, 0, 0x7fff_fff0));
        Completion c = await(pair[0].sendQueue());
        assertThat(c.wrId()).isEqualTo(2);
        assertThat(c.status()).isEqualTo(Status.WR_FLUSH_ERROR);
    }

    @Test
    void workPostedBeforeConnectCompletesWithFlushError() throws Exception {
        MemoryRegion local = initiatorBuffer(64);
        Endpoint idle = closeLater(initiator.createEndpoint());
        idle.post(WorkRequest.read(4, local, 0, 8, 0, 1));
        Completion c = await(idle.sendQueue());
        assertThat(c.wrId()).isEqualTo(4);
        assertThat(c.status()).isEqualTo(Status.WR_FLUSH_ERROR);
    }

    // ------------------------------------------------------------------ two-sided errors

    @Test
    void sendWithoutAPostedReceiveFailsWithRnrWithinTheTimeout() throws Exception {
        MemoryRegion local = initiatorBuffer(64);
        Duration rnr = Duration.ofMillis(50);
        Endpoint[] pair = connectPair(EndpointOptions.defaults().withRnrTimeout(rnr), EndpointOptions.defaults(), s -> { });
        long start = System.nanoTime();
        pair[0].post(WorkRequest.send(1, local, 0, 16));
        Completion c = await(pair[0].sendQueue());
        long elapsedMillis = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start);
        assertThat(c.status()).isEqualTo(Status.RNR_RETRY_EXCEEDED);
        assertThat(elapsedMillis).isGreaterThanOrEqualTo(rnr.toMillis() - 5).isLessThan(5000);
    }

    /**
     * What a request-reply client relies on when it posts its request SEND unsignalled (erda-client's calls): a SEND
     * that fails still completes, with its own status, and fails the endpoint, which flushes the receive the client
     * waits on for the reply.
     */
    @Test
    void unsignaledSendThatFailsCompletesItsErrorAndFlushesTheReceives() throws Exception {
        MemoryRegion local = initiatorBuffer(128);
        Endpoint[] pair = connectPair(EndpointOptions.defaults().withRnrTimeout(Duration.ofMillis(20)),
                EndpointOptions.defaults(), s -> { });
        try (SyncEndpoint sync = new SyncEndpoint(pair[0], Duration.ofSeconds(10))) {
            sync.postRecv(local, 64, 64);
            sync.sendUnsignaled(local, 0, 16); // the target posted no receive
            assertThatThrownBy(sync::receive).isInstanceOfSatisfying(io.erda.fabric.CompletionException.class,
                    e -> assertThat(e.status()).isEqualTo(Status.WR_FLUSH_ERROR));
            Completion failed = sync.failedSend();
            assertThat(failed).isNotNull();
            assertThat(failed.status()).isEqualTo(Status.RNR_RETRY_EXCEEDED);
            assertThat(failed.opcode()).isEqualTo(Opcode.SEND);
        }
    }

    /** An unsignalled SEND that succeeds completes nothing: the reply is what tells its client it arrived. */
    @Test
    void unsignaledSendThatSucceedsCompletesOnlyOnTheTarget() throws Exception {
        MemoryRegion local = initiatorBuffer(64);
        MemoryRegion recvBuf = targetBuffer(64);
        Endpoint[] pair = connectPair();
        pair[1].postRecv(new RecvRequest(3, recvBuf, 0, 32));
        pair[1].postRecv(new RecvRequest(4, recvBuf, 32, 32));
        try (SyncEndpoint sync = new SyncEndpoint(pair[0], Duration.ofSeconds(10))) {
            sync.sendUnsignaled(local, 0, 16);
            Completion received = await(pair[1].recvQueue());
            assertThat(received.wrId()).isEqualTo(3);
            assertThat(received.status()).isEqualTo(Status.SUCCESS);
            assertThat(received.byteLength()).isEqualTo(16);
            // a signalled SEND after it: its completion must be the send queue's next (SyncEndpoint checks the wr id)
            sync.send(local, 0, 8);
            assertThat(await(pair[1].recvQueue()).wrId()).isEqualTo(4);
            assertThat(pair[0].sendQueue().poll()).isNull();
        }
    }

    @Test
    void writeWithImmWithoutAPostedReceiveFailsWithRnr() throws Exception {
        MemoryRegion remote = targetMemory(4096, Access.all());
        MemoryRegion local = initiatorBuffer(64);
        Endpoint[] pair = connectPair(EndpointOptions.defaults().withRnrTimeout(Duration.ofMillis(20)),
                EndpointOptions.defaults(), s -> { });
        pair[0].post(WorkRequest.writeWithImm(1, local, 0, 16, remote.address(), remote.rkey(), 5));
        assertThat(await(pair[0].sendQueue()).status()).isEqualTo(Status.RNR_RETRY_EXCEEDED);
    }

    @Test
    void receiveSmallerThanTheMessageFailsOnBothSides() throws Exception {
        MemoryRegion recvBuf = targetBuffer(64);
        MemoryRegion local = initiatorBuffer(128);
        Endpoint[] pair = connectPair(EndpointOptions.defaults(), EndpointOptions.defaults(),
                server -> server.postRecv(new RecvRequest(8, recvBuf, 0, 16)));
        pair[0].post(WorkRequest.send(1, local, 0, 64));
        assertThat(await(pair[0].sendQueue()).status()).isNotIn(Status.SUCCESS, Status.WR_FLUSH_ERROR);
        Completion recv = await(pair[1].recvQueue());
        assertThat(recv.wrId()).isEqualTo(8);
        // IBV_WC_LOC_LEN_ERR on most devices; rxe reports the too-short receive as IBV_WC_LOC_QP_OP_ERR
        assertThat(recv.status()).isIn(Status.LOCAL_LENGTH_ERROR, Status.LOCAL_QP_OPERATION_ERROR);
        assertThat(bytes(recvBuf.segment(), 16, 48)).containsOnly(0);
    }

    @Test
    void postingBeyondMaxSendWrThrows() throws Exception {
        MemoryRegion remote = targetMemory(64 * 1024, RegisterOptions.of(Access.all()).withWriteDelay(500_000));
        MemoryRegion local = initiatorBuffer(4096);
        Endpoint[] pair = connectPair(EndpointOptions.defaults().withDepth(4, 4), EndpointOptions.defaults(), s -> { });
        for (int i = 0; i < 4; i++) {
            pair[0].post(WorkRequest.write(i, local, 0, 4096, remote.address(), remote.rkey())); // 64 lines x 0.5 ms
        }
        assertThatThrownBy(() -> pair[0].post(WorkRequest.write(4, local, 0, 8, remote.address(), remote.rkey())))
                .isInstanceOf(FabricException.class);
        for (int i = 0; i < 4; i++) {
            assertThat(await(pair[0].sendQueue()).wrId()).isEqualTo(i);
        }
    }

    // ------------------------------------------------------------------ broken connections

    @ParameterizedTest
    @ValueSource(strings = {"initiator", "target"})
    void abortWithRequestsPendingCompletesEveryRequestOnBothSidesWithoutHanging(String aborter) throws Exception {
        MemoryRegion slow = targetMemory(64 * 1024, RegisterOptions.of(Access.all()).withWriteDelay(100_000));
        MemoryRegion serverRecv = targetBuffer(256);
        MemoryRegion serverSend = targetBuffer(64);
        MemoryRegion local = initiatorBuffer(4096);
        Endpoint[] pair = connectPair(EndpointOptions.defaults(), EndpointOptions.defaults().withRnrTimeout(Duration.ofSeconds(30)),
                server -> {
                    for (int i = 0; i < 4; i++) {
                        server.postRecv(new RecvRequest(100 + i, serverRecv, i * 64L, 64));
                    }
                });
        int writes = 50; // 64 lines x 0.1 ms each: several hundred ms of work outstanding
        for (int i = 0; i < writes; i++) {
            pair[0].post(WorkRequest.write(i, local, 0, 4096, slow.address(), slow.rkey()));
        }
        pair[1].post(WorkRequest.send(7, serverSend, 0, 64)); // the initiator posted no receive: pending for the RNR window
        Thread.sleep(20);
        (aborter.equals("initiator") ? pair[0] : pair[1]).abort();

        Set<Status> initiatorStatuses = EnumSet.noneOf(Status.class);
        boolean sawError = false;
        for (int i = 0; i < writes; i++) {
            Completion c = await(pair[0].sendQueue());
            assertThat(c.wrId()).isEqualTo(i);
            if (sawError) {
                assertThat(c.isSuccess()).as("wr %d after an error", i).isFalse();
            }
            sawError |= !c.isSuccess();
            initiatorStatuses.add(c.status());
        }
        if (target.capabilities().writeLatencyModel()) {
            // 64 lines x 0.1 ms per write keep them in flight; a real RNIC (no latency model) may have finished
            // them all, and then the target's send below, in its RNR window, is the request that was pending
            assertThat(sawError).as("some writes were still pending when the connection broke").isTrue();
        }
        assertThat(await(pair[1].sendQueue()).isSuccess()).isFalse();
        for (int i = 0; i < 4; i++) {
            assertThat(await(pair[1].recvQueue()).status()).isEqualTo(Status.WR_FLUSH_ERROR);
        }
        awaitState(pair[0], Endpoint.State.ERROR);
        awaitState(pair[1], Endpoint.State.ERROR);
        assertThat(initiatorStatuses).doesNotContainNull();
    }

    /**
     * A server posts its receives before it accepts and answers from the thread that polls them, which may see the
     * client's first request before {@code accept} has returned (with the TCP side channel, before the client's
     * READY byte has been read; with rdma_cm, before ESTABLISHED). The answer must go out, not flush: on rxe in the
     * VM that window is wide and the store's functional suites lost connections to it.
     */
    @Test
    void theAcceptingSideCanAnswerTheFirstMessageAsSoonAsItArrives() throws Exception {
        MemoryRegion serverRecv = targetBuffer(64);
        MemoryRegion serverSend = targetBuffer(64);
        MemoryRegion clientBuf = initiatorBuffer(128);
        Endpoint client = closeLater(initiator.createEndpoint(EndpointOptions.defaults()));
        client.postRecv(new RecvRequest(50, clientBuf, 64, 64));
        Thread connector = Thread.ofPlatform().start(() -> {
            client.connect(listener.uri(), new byte[] {1});
            client.post(WorkRequest.send(51, clientBuf, 0, 16)); // at once, as Connection.open's first call does
        });
        ConnectionRequest request = listener.accept(WAIT_SECONDS, TimeUnit.SECONDS);
        assertThat(request).as("connection request").isNotNull();
        Endpoint server = closeLater(target.createEndpoint(EndpointOptions.defaults()));
        server.postRecv(new RecvRequest(60, serverRecv, 0, 64));
        java.util.concurrent.CompletableFuture<Completion> answered = new java.util.concurrent.CompletableFuture<>();
        Thread responder = Thread.ofPlatform().start(() -> {
            try {
                Completion got = await(server.recvQueue());
                assertThat(got.isSuccess()).as("%s", got).isTrue();
                server.post(WorkRequest.send(61, serverSend, 0, 8)); // no waiting for accept to return
                answered.complete(await(server.sendQueue()));
            } catch (Throwable t) {
                answered.completeExceptionally(t);
            }
        });
        request.accept(server, new byte[] {9});
        connector.join(WAIT_SECONDS * 1000);
        responder.join(WAIT_SECONDS * 1000);
        assertThat(answered.get(WAIT_SECONDS, TimeUnit.SECONDS).isSuccess()).as("the answer's completion").isTrue();
        assertThat(await(client.sendQueue()).isSuccess()).isTrue();
        Completion reply = await(client.recvQueue());
        assertThat(reply.isSuccess()).as("%s", reply).isTrue();
        assertThat(reply.byteLength()).isEqualTo(8);
        assertThat(server.state()).isEqualTo(Endpoint.State.CONNECTED);
    }

    /**
     * A server's shutdown: it closes its connections, then its shared completion queues, with completions of the
     * closed endpoints never polled (verbs keeps such a QP until they are: destroying the CQ under it is EBUSY).
     */
    @Test
    void sharedQueuesCloseAfterTheirEndpointsWithCompletionsUnpolled() throws Exception {
        CompletionQueue sends = target.createCompletionQueue(64);
        CompletionQueue recvs = target.createCompletionQueue(64);
        MemoryRegion serverRecv = targetBuffer(256);
        Endpoint[] pair = connectPair(EndpointOptions.defaults(), EndpointOptions.defaults().withQueues(sends, recvs),
                server -> {
                    for (int i = 0; i < 4; i++) {
                        server.postRecv(new RecvRequest(400 + i, serverRecv, i * 64L, 64));
                    }
                });
        pair[1].close();
        assertThatCode(sends::close).doesNotThrowAnyException();
        assertThatCode(recvs::close).doesNotThrowAnyException();
        pair[0].close();
    }

    /**
     * A server's clients come and go while its fabric stays open for months: each closed connection gives its
     * resources back once the server's poller has had the flushed receives of its side (verbs destroys a closed QP
     * only then, so the owner still gets them). Where the provider has queue pairs, their count returns to where it
     * was; everywhere, each round's receives come back flushed and the shared queues hold nothing more.
     */
    @Test
    void closedConnectionsGiveTheirQueuePairsBackWhileTheFabricStaysOpen() throws Exception {
        CompletionQueue sends = closeLater(target.createCompletionQueue(64));
        CompletionQueue recvs = closeLater(target.createCompletionQueue(64));
        MemoryRegion serverRecv = targetBuffer(4 * 64);
        OptionalInt before = liveQueuePairs();
        for (int round = 0; round < 20; round++) {
            long base = round * 10L;
            Endpoint[] pair = connectPair(EndpointOptions.defaults(), EndpointOptions.defaults().withQueues(sends, recvs),
                    server -> {
                        for (int i = 0; i < 4; i++) {
                            server.postRecv(new RecvRequest(base + i, serverRecv, i * 64L, 64));
                        }
                    });
            if (round == 0 && before.isPresent()) { // the count sees the two QPs of a connection
                assertThat(liveQueuePairs()).as("queue pairs with one connection open").hasValue(before.getAsInt() + 2);
            }
            pair[0].close(); // the client leaves
            awaitState(pair[1], Endpoint.State.ERROR);
            pair[1].close(); // the server closes its side with the receives still posted
            for (int i = 0; i < 4; i++) {
                Completion flushed = await(recvs);
                assertThat(flushed.wrId()).as("round %d", round).isEqualTo(base + i);
                assertThat(flushed.status()).isEqualTo(Status.WR_FLUSH_ERROR);
            }
            assertThat(recvs.poll()).isNull();
            assertThat(sends.poll()).isNull();
        }
        if (before.isPresent()) {
            assertThat(liveQueuePairs()).as("queue pairs after 20 closed connections").hasValue(before.getAsInt());
        }
    }

    /**
     * Both sides close at once while each breaks the other (end of the side channel, flushed completions being
     * polled on a third thread): every call that reaches the QP either completes before it is destroyed or is
     * refused; none touches a destroyed one (on a real device that is a SIGSEGV in libibverbs, as CI once saw).
     */
    @Test
    void closingBothSidesAtOnceWhileTheyBreakEachOtherIsSafe() throws Exception {
        MemoryRegion remote = targetMemory(4096, Access.all());
        MemoryRegion local = initiatorBuffer(4096);
        MemoryRegion serverRecv = targetBuffer(8 * 64);
        ExecutorService pool = Executors.newFixedThreadPool(3);
        try {
            for (int round = 0; round < 30; round++) {
                Endpoint[] pair = connectPair(EndpointOptions.defaults(), EndpointOptions.defaults(), server -> {
                    for (int i = 0; i < 8; i++) {
                        server.postRecv(new RecvRequest(i, serverRecv, i * 64L, 64));
                    }
                });
                for (int i = 0; i < 8; i++) {
                    pair[0].post(WorkRequest.write(i, local, i * 512L, 512, remote.address() + i * 512L, remote.rkey()));
                }
                java.util.concurrent.CountDownLatch go = new java.util.concurrent.CountDownLatch(1);
                long until = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(20);
                List<Future<?>> running = List.of(
                        pool.submit(() -> {
                            go.await();
                            pair[0].close();
                            return null;
                        }),
                        pool.submit(() -> {
                            go.await();
                            pair[1].close();
                            return null;
                        }),
                        pool.submit(() -> {
                            go.await();
                            while (System.nanoTime() < until) {
                                pair[0].sendQueue().poll();
                                pair[1].recvQueue().poll();
                            }
                            return null;
                        }));
                go.countDown();
                for (Future<?> f : running) {
                    f.get(WAIT_SECONDS, TimeUnit.SECONDS);
                }
                for (Endpoint e : pair) {
                    assertThat(e.state()).isEqualTo(Endpoint.State.CLOSED);
                }
                assertThatThrownBy(() -> pair[0].post(WorkRequest.write(99, local, 0, 8, remote.address(), remote.rkey())))
                        .isInstanceOf(FabricException.class).hasMessageContaining("closed");
                assertThatThrownBy(() -> pair[1].postRecv(new RecvRequest(99, serverRecv, 0, 64)))
                        .isInstanceOf(FabricException.class).hasMessageContaining("closed");
            }
        } finally {
            pool.shutdownNow();
        }
    }

    @Test
    void closingOneSideFlushesThePeersReceivesAsClosedByThePeer() throws Exception {
        MemoryRegion serverRecv = targetBuffer(256);
        MemoryRegion clientRecv = initiatorBuffer(256);
        Endpoint[] pair = connectPair(EndpointOptions.defaults(), EndpointOptions.defaults(), server -> {
            for (int i = 0; i < 2; i++) {
                server.postRecv(new RecvRequest(200 + i, serverRecv, i * 64L, 64));
            }
        });
        pair[0].postRecv(new RecvRequest(300, clientRecv, 0, 64));
        pair[0].close();

        for (int i = 0; i < 2; i++) {
            Completion flushed = await(pair[1].recvQueue());
            assertThat(flushed.wrId()).isEqualTo(200 + i);
            assertThat(flushed.status()).isEqualTo(Status.WR_FLUSH_ERROR);
            // what a server uses to tell a client leaving from a fault worth a log line
            assertThat(flushed.peerClosed()).as("%s", flushed).isTrue();
        }
        awaitState(pair[1], Endpoint.State.ERROR);
        Completion own = await(pair[0].recvQueue());
        assertThat(own.status()).isEqualTo(Status.WR_FLUSH_ERROR);
        assertThat(own.peerClosed()).as("the side that closed: %s", own).isFalse();
    }

    // ------------------------------------------------------------------ scale and concurrency

    @Test
    void sixtyFourConcurrentConnectionsEachDoVerifiedWork() throws Exception {
        int connections = 64;
        int chunk = 4096;
        MemoryRegion remote = targetMemory((long) connections * chunk, Access.all());
        List<Endpoint> clients = new ArrayList<>();
        for (int i = 0; i < connections; i++) {
            clients.add(connectPair()[0]);
        }
        ExecutorService pool = Executors.newFixedThreadPool(connections);
        try {
            List<Future<?>> done = new ArrayList<>();
            for (int i = 0; i < connections; i++) {
                int id = i;
                done.add(pool.submit(() -> {
                    MemoryRegion local = initiatorBuffer(2L * chunk);
                    try (SyncEndpoint sync = new SyncEndpoint(clients.get(id))) {
                        long base = remote.address() + (long) id * chunk;
                        for (int round = 0; round < 20; round++) {
                            fill(local.segment(), 0, chunk - 8, id * 1000 + round);
                            sync.write(local, 0, chunk - 8, base, remote.rkey());
                            sync.read(local, chunk, chunk - 8, base, remote.rkey());
                            assertThat(bytes(local.segment(), chunk, chunk - 8)).containsExactly(bytes(local.segment(), 0, chunk - 8));
                            assertThat(sync.fetchAdd(base + chunk - 8, remote.rkey(), 1)).isEqualTo(round);
                        }
                    }
                    return null;
                }));
            }
            for (Future<?> f : done) {
                f.get(WAIT_SECONDS * 3, TimeUnit.SECONDS);
            }
        } finally {
            pool.shutdownNow();
        }
    }

    @Test
    void concurrentFetchAddsFromSeveralConnectionsSumCorrectly() throws Exception {
        MemoryRegion remote = targetMemory(4096, Access.all());
        int connections = 6;
        int adds = 1000;
        List<Endpoint> clients = new ArrayList<>();
        for (int i = 0; i < connections; i++) {
            clients.add(connectPair()[0]);
        }
        Set<Long> seen = ConcurrentHashMap.newKeySet();
        List<Thread> threads = new ArrayList<>();
        for (Endpoint client : clients) {
            threads.add(Thread.ofPlatform().start(() -> {
                try (SyncEndpoint sync = new SyncEndpoint(client)) {
                    for (int i = 0; i < adds; i++) {
                        seen.add(sync.fetchAdd(remote.address() + 256, remote.rkey(), 1));
                    }
                }
            }));
        }
        for (Thread t : threads) {
            t.join(WAIT_SECONDS * 3000);
        }
        assertThat(remote.segment().get(ValueLayout.JAVA_LONG, 256)).isEqualTo((long) connections * adds);
        assertThat(seen).as("every old value distinct").hasSize(connections * adds);
    }

    // ------------------------------------------------------------------ fault injection

    @Test
    void droppedWriteCompletesButLeavesTargetMemoryUntouched() throws Exception {
        MemoryRegion remote = targetMemory(4096, Access.all());
        MemoryRegion local = initiatorBuffer(256);
        fill(local.segment(), 0, 256, 4);
        FaultInjectingEndpoint faulty = new FaultInjectingEndpoint(connectPair()[0]).dropNextWrite();
        try (SyncEndpoint sync = new SyncEndpoint(faulty)) {
            sync.write(local, 0, 256, remote.address(), remote.rkey());
            assertThat(bytes(remote.segment(), 0, 256)).containsOnly(0);
            sync.write(local, 0, 256, remote.address(), remote.rkey());
            assertThat(bytes(remote.segment(), 0, 256)).containsExactly(bytes(local.segment(), 0, 256));
        }
        assertThat(faulty.armedFaults()).isZero();
    }

    @Test
    void truncatedWriteWritesExactlyItsFirstBytes() throws Exception {
        MemoryRegion remote = targetMemory(4096, Access.all());
        fill(remote.segment(), 0, 4096, 0x77);
        byte[] before = bytes(remote.segment(), 0, 4096);
        MemoryRegion local = initiatorBuffer(256);
        fill(local.segment(), 0, 256, 4);
        FaultInjectingEndpoint faulty = new FaultInjectingEndpoint(connectPair()[0]).truncateNextWrite(100);
        try (SyncEndpoint sync = new SyncEndpoint(faulty)) {
            sync.write(local, 0, 256, remote.address() + 64, remote.rkey());
        }
        assertThat(bytes(remote.segment(), 64, 100)).containsExactly(bytes(local.segment(), 0, 100));
        assertThat(bytes(remote.segment(), 164, 4096 - 164)).containsExactly(Arrays.copyOfRange(before, 164, 4096));
        assertThat(bytes(remote.segment(), 0, 64)).containsExactly(Arrays.copyOfRange(before, 0, 64));
    }

    @Test
    void delayedWriteIsStillOrderedBeforeALaterRead() throws Exception {
        MemoryRegion remote = targetMemory(4096, Access.all());
        MemoryRegion local = initiatorBuffer(512);
        fill(local.segment(), 0, 64, 8);
        FaultInjectingEndpoint faulty = new FaultInjectingEndpoint(connectPair()[0]).delayNextWrite(Duration.ofMillis(30));
        long start = System.nanoTime();
        faulty.post(WorkRequest.write(1, local, 0, 64, remote.address(), remote.rkey()).unsignaled());
        faulty.post(WorkRequest.read(2, local, 256, 64, remote.address(), remote.rkey()));
        Completion c = await(faulty.sendQueue());
        assertThat(c.wrId()).isEqualTo(2);
        assertThat(System.nanoTime() - start).isGreaterThanOrEqualTo(TimeUnit.MILLISECONDS.toNanos(30));
        assertThat(bytes(local.segment(), 256, 64)).containsExactly(bytes(local.segment(), 0, 64));
    }

    @Test
    void breakAtNextWriteLeavesEarlierRequestsAloneAndFailsTheWrite() throws Exception {
        MemoryRegion remote = targetMemory(4096, Access.all());
        fill(remote.segment(), 64, 64, 5);
        MemoryRegion local = initiatorBuffer(512);
        fill(local.segment(), 0, 64, 9);
        FaultInjectingEndpoint faulty = new FaultInjectingEndpoint(connectPair()[0]).breakConnectionAtNextWrite();
        try (SyncEndpoint sync = new SyncEndpoint(faulty)) {
            sync.read(local, 256, 64, remote.address() + 64, remote.rkey()); // before the WRITE: on a live connection
            assertThat(bytes(local.segment(), 256, 64)).containsExactly(bytes(remote.segment(), 64, 64));
            assertThatThrownBy(() -> sync.write(local, 0, 64, remote.address(), remote.rkey()))
                    .isInstanceOf(FabricException.class);
        }
        assertThat(faulty.armedFaults()).isZero();
        assertThat(bytes(remote.segment(), 0, 64)).as("the WRITE met a broken connection").containsOnly(0);
    }

    /**
     * With the capability, a one-sided WRITE takes at least the modelled time per cache line. A real RNIC writes
     * memory itself and has no model: the option is accepted and ignored, and the write still lands intact.
     */
    @Test
    void writeLatencyModelDelaysOneSidedWritesPerCacheLine() throws Exception {
        MemoryRegion remote = targetMemory(8192, RegisterOptions.of(Access.all()).withWriteDelay(200_000));
        MemoryRegion local = initiatorBuffer(4096);
        fill(local.segment(), 0, 4096, 23);
        Endpoint[] pair = connectPair();
        try (SyncEndpoint sync = new SyncEndpoint(pair[0])) {
            long start = System.nanoTime();
            sync.write(local, 0, 4096, remote.address(), remote.rkey()); // 64 lines
            if (target.capabilities().writeLatencyModel()) {
                assertThat(System.nanoTime() - start).isGreaterThanOrEqualTo(64 * 200_000L);
            }
        }
        assertThat(bytes(remote.segment(), 0, 4096)).containsExactly(bytes(local.segment(), 0, 4096));
    }

    /**
     * A durable mirror (power-failure emulation) receives exactly what one-sided WRITEs and atomics placed, and
     * nothing the target stored itself or a failed compare-and-swap left alone. A real RNIC places writes unseen:
     * there the registration is refused by name.
     */
    /** A mapped mirror file of 8192 bytes and the lock word after it, as a durable image keeps it. */
    private record MirrorFile(Path file, MemorySegment mirror, MemorySegment lock) {
    }

    private MirrorFile mirrorFile() throws IOException {
        Path file = Files.createTempFile(tempDir, "mirror", ".durable");
        try (FileChannel ch = FileChannel.open(file, StandardOpenOption.READ, StandardOpenOption.WRITE)) {
            ch.truncate(8192 + 64);
            MemorySegment whole = ch.map(FileChannel.MapMode.READ_WRITE, 0, 8192 + 64, arena);
            return new MirrorFile(file, whole.asSlice(0, 8192), whole.asSlice(8192, 8));
        }
    }

    @Test
    void durableMirrorReceivesWhatOneSidedWritesPlacedElseIsRefused() throws Exception {
        MirrorFile made = mirrorFile();
        Path mirrorFile = made.file();
        MemorySegment mirror = made.mirror();
        MemorySegment lock = made.lock();
        RegisterOptions options = RegisterOptions.of(Access.all())
                .withDurableMirror(new DurableMirror(mirror, new Backing(mirrorFile, 0), lock, 8192));
        if (!target.capabilities().writeLatencyModel()) {
            assertThatThrownBy(() -> targetMemory(8192, options)).isInstanceOf(FabricException.class)
                    .hasMessageContaining("durable mirror").hasMessageContaining("writes memory unseen");
            return;
        }
        MemoryRegion remote = targetMemory(8192, options);
        remote.segment().set(ValueLayout.JAVA_LONG, 16, 7L); // the target's own stores are not mirrored
        remote.segment().set(ValueLayout.JAVA_LONG, 512, 9L);
        MemoryRegion local = initiatorBuffer(4096);
        fill(local.segment(), 0, 100, 31);
        Endpoint[] pair = connectPair();
        try (SyncEndpoint sync = new SyncEndpoint(pair[0])) {
            sync.write(local, 0, 100, remote.address() + 1003, remote.rkey());
            assertThat(sync.fetchAdd(remote.address(), remote.rkey(), 5)).isZero();
            assertThat(sync.compareAndSwap(remote.address() + 8, remote.rkey(), 0L, 42L)).isZero();
            assertThat(sync.compareAndSwap(remote.address() + 16, remote.rkey(), 41L, 43L)).isEqualTo(7L);
        }
        assertThat(bytes(mirror, 1003, 100)).containsExactly(bytes(local.segment(), 0, 100));
        assertThat(mirror.get(ValueLayout.JAVA_LONG, 0)).isEqualTo(5L);
        assertThat(mirror.get(ValueLayout.JAVA_LONG, 8)).isEqualTo(42L);
        assertThat(mirror.get(ValueLayout.JAVA_LONG, 16)).isZero();
        assertThat(mirror.get(ValueLayout.JAVA_LONG, 512)).isZero();
        assertThat(mirror.get(ValueLayout.JAVA_BYTE, 1002)).isZero();
        assertThat(mirror.get(ValueLayout.JAVA_BYTE, 1103)).isZero();
        assertThat(lock.get(ValueLayout.JAVA_LONG, 0)).as("lock released").isZero();
        MemorySegment shorter = mirror.asSlice(0, 4096);
        assertThatThrownBy(() -> targetMemory(8192, RegisterOptions.of(Access.all())
                .withDurableMirror(new DurableMirror(shorter, new Backing(mirrorFile, 0), lock, 8192))))
                .hasMessageContaining("durable mirror of 4096 bytes for a registration of 8192 bytes");
    }

    /**
     * A mirror whose writes wait to be shown placed or fenced (power-failure emulation of MHP and of DMP without
     * DDIO): a WRITE reaches it only once a later request of the connection shows it placed (an atomic) or fenced (a
     * READ), or once more than {@code UnfencedWrites.CAPACITY} later writes push it out. A provider that mirrors as it
     * places refuses such a mirror by name.
     */
    @Test
    void durableMirrorTakesWritesOnlyOnceALaterRequestShowsThemPlacedOrFenced() throws Exception {
        MirrorFile made = mirrorFile();
        MemorySegment mirror = made.mirror();
        DurableMirror fenced = new DurableMirror(mirror, new Backing(made.file(), 0), made.lock(), 8192,
                DurableMirror.Durability.ONCE_FENCED);
        MemoryRegion remote;
        try {
            remote = targetMemory(8192, RegisterOptions.of(Access.all()).withDurableMirror(fenced));
        } catch (FabricException refused) {
            assertThat(refused).hasMessageContaining("durable mirror");
            return;
        }
        MemoryRegion local = initiatorBuffer(4096);
        fill(local.segment(), 0, 4096, 17);
        Endpoint[] pair = connectPair();
        try (SyncEndpoint sync = new SyncEndpoint(pair[0])) {
            sync.write(local, 0, 64, remote.address(), remote.rkey());
            assertThat(bytes(mirror, 0, 64)).as("completed, not fenced").containsOnly(0);
            assertThat(sync.fetchAdd(remote.address() + 4096, remote.rkey(), 1)).isZero();
            assertThat(bytes(mirror, 0, 64)).as("an atomic shows it placed, which DMP does not keep").containsOnly(0);
            sync.read(local, 2048, 8, remote.address() + 8000, remote.rkey());
            assertThat(bytes(mirror, 0, 64)).as("fenced by a READ").containsExactly(bytes(local.segment(), 0, 64));
            assertThat(mirror.get(ValueLayout.JAVA_LONG, 4096)).isEqualTo(1L);
            for (int i = 1; i <= UnfencedWrites.CAPACITY + 1; i++) {
                sync.write(local, i * 64, 64, remote.address() + i * 64, remote.rkey());
            }
            assertThat(bytes(mirror, 64, 64)).as("drained by later writes").containsExactly(bytes(local.segment(), 64, 64));
            assertThat(bytes(mirror, 128, 64 * UnfencedWrites.CAPACITY)).containsOnly(0);
        }
        MemoryRegion shown = targetMemory(8192, RegisterOptions.of(Access.all())
                .withDurableMirror(fenced.withDurability(DurableMirror.Durability.ONCE_SHOWN_PLACED)));
        pair = connectPair();
        try (SyncEndpoint sync = new SyncEndpoint(pair[0])) {
            sync.write(local, 0, 64, shown.address() + 6144, shown.rkey());
            assertThat(bytes(mirror, 6144, 64)).containsOnly(0);
            assertThat(sync.fetchAdd(shown.address() + 7168, shown.rkey(), 1)).isZero();
            assertThat(bytes(mirror, 6144, 64)).as("an atomic shows it placed: MHP keeps it")
                    .containsExactly(bytes(local.segment(), 0, 64));
        }
    }

    @Test
    void queueSizesBeyondTheDeviceLimitsAreRefusedNamingValueAndLimit() {
        FabricCapabilities caps = target.capabilities();
        assertThat(caps.device()).isNotBlank();
        assertThat(caps.maxCompletionQueueEntries()).isPositive();
        assertThat(caps.maxWorkRequests()).isPositive();
        if (caps.maxCompletionQueueEntries() < Integer.MAX_VALUE) {
            int over = caps.maxCompletionQueueEntries() + 1;
            assertThatThrownBy(() -> target.createCompletionQueue(over)).isInstanceOf(FabricException.class)
                    .hasMessage("completion queue of " + over + " entries exceeds the limit of "
                            + caps.maxCompletionQueueEntries() + " of " + caps.device());
            closeLater(target.createCompletionQueue(caps.maxCompletionQueueEntries()));
        }
        if (caps.maxWorkRequests() < Integer.MAX_VALUE) {
            int over = caps.maxWorkRequests() + 1;
            assertThatThrownBy(() -> target.createEndpoint(EndpointOptions.defaults().withDepth(over, 4)))
                    .isInstanceOf(FabricException.class)
                    .hasMessage("send queue of " + over + " work requests exceeds the limit of " + caps.maxWorkRequests()
                            + " of " + caps.device());
        }
    }

    /**
     * Unsignalled requests whose completions nobody waits for (SENDs answered through the receive queue, as in a
     * request/response protocol) never fill the send queue for good: many times its depth go through without the
     * send queue ever being polled. A request whose acknowledgement is still on its way (tcp) may hold its slot a
     * moment longer, so a full queue is retried until it frees itself, within the usual bound.
     */
    @Test
    void unsignaledSendsWhoseSendQueueIsNeverPolledDoNotFillIt() throws Exception {
        int depth = 8;
        MemoryRegion serverBuf = targetBuffer(64L * depth);
        MemoryRegion clientBuf = initiatorBuffer(64);
        Endpoint[] pair = connectPair(EndpointOptions.defaults().withDepth(depth, depth),
                EndpointOptions.defaults().withDepth(depth, depth), server -> {
                    for (int i = 0; i < depth; i++) {
                        server.postRecv(new RecvRequest(i, serverBuf, 64L * i, 64));
                    }
                });
        for (int i = 0; i < 20 * depth; i++) {
            clientBuf.segment().set(ValueLayout.JAVA_INT, 0, i);
            postRetryingWhileFull(pair[0], WorkRequest.send(i, clientBuf, 0, 4).unsignaled());
            Completion c = await(pair[1].recvQueue());
            assertThat(c.status()).isEqualTo(Status.SUCCESS);
            assertThat(serverBuf.segment().get(ValueLayout.JAVA_INT, 64L * c.wrId())).isEqualTo(i);
            pair[1].postRecv(new RecvRequest(c.wrId(), serverBuf, 64L * c.wrId(), 64));
        }
        assertThat(pair[0].sendQueue().poll()).isNull();
    }

    // ------------------------------------------------------------------ connection set-up

    @Test
    void privateDataOfUpToTheLimitTravelsOnConnectAndAccept() throws Exception {
        byte[] hello = new byte[Fabric.MAX_PRIVATE_DATA];
        byte[] welcome = new byte[Fabric.MAX_PRIVATE_DATA];
        Arrays.fill(hello, (byte) 0x21);
        Arrays.fill(welcome, (byte) 0x42);
        Endpoint client = closeLater(initiator.createEndpoint());
        Thread connector = Thread.ofPlatform().start(() -> client.connect(listener.uri(), hello));
        ConnectionRequest request = listener.accept(WAIT_SECONDS, TimeUnit.SECONDS);
        assertThat(request.privateData()).containsExactly(hello);
        Endpoint server = closeLater(target.createEndpoint());
        request.accept(server, welcome);
        connector.join(WAIT_SECONDS * 1000);
        assertThat(client.peerPrivateData()).containsExactly(welcome);
        assertThat(server.peerPrivateData()).containsExactly(hello);
        assertThat(server.state()).isEqualTo(Endpoint.State.CONNECTED);
    }

    @Test
    void privateDataOverTheLimitIsRefused() {
        Endpoint client = closeLater(initiator.createEndpoint());
        assertThatThrownBy(() -> client.connect(listener.uri(), new byte[Fabric.MAX_PRIVATE_DATA + 1]))
                .isInstanceOf(FabricException.class).hasMessageContaining(String.valueOf(Fabric.MAX_PRIVATE_DATA));
    }

    @Test
    void rejectedConnectThrowsWithTheReason() throws Exception {
        Endpoint client = closeLater(initiator.createEndpoint());
        List<Throwable> thrown = new CopyOnWriteArrayList<>();
        Thread connector = Thread.ofPlatform().start(() -> {
            try {
                client.connect(listener.uri(), new byte[0]);
            } catch (Throwable t) {
                thrown.add(t);
            }
        });
        ConnectionRequest request = listener.accept(WAIT_SECONDS, TimeUnit.SECONDS);
        request.reject("server full: 512 of 512 clients");
        connector.join(WAIT_SECONDS * 1000);
        assertThat(thrown).singleElement().isInstanceOf(FabricException.class)
                .extracting(Throwable::getMessage).asString().contains("server full: 512 of 512 clients");
        assertThat(client.state()).isNotEqualTo(Endpoint.State.CONNECTED);
    }

    @Test
    void acceptTimesOutWithNullWhenNobodyConnects() throws Exception {
        assertThat(listener.accept(20, TimeUnit.MILLISECONDS)).isNull();
    }
}
