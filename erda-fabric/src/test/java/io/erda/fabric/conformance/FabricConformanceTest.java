package io.erda.fabric.conformance;

import io.erda.fabric.Access;
import io.erda.fabric.Backing;
import io.erda.fabric.Endpoint;
import io.erda.fabric.Fabric;
import io.erda.fabric.Listener;
import io.erda.fabric.MemoryRegion;
import io.erda.fabric.RegisterOptions;
import io.erda.fabric.SyncEndpoint;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.net.URI;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The fabric conformance suite: every provider runs it (one subclass per provider). A "target" fabric listens
 * and owns file-backed memory (as the server's PM); an "initiator" fabric connects and works on it.
 */
public abstract class FabricConformanceTest {

    @TempDir
    protected Path tempDir;

    protected Fabric target;
    protected Fabric initiator;
    protected Listener listener;
    protected final Arena arena = Arena.ofShared();
    private final List<AutoCloseable> closeables = new ArrayList<>();

    /** The URI the target listens on (tcp: port 0 on loopback; shm: a directory under {@code tempDir}). */
    protected abstract URI listenUri(Path tempDir);

    /** Opens a fabric instance for the provider under test. */
    protected Fabric openFabric(URI uri) {
        return Fabric.open(uri);
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

    /** File-backed memory registered on the target (what a server does with a PM region). */
    protected MemoryRegion targetMemory(long size, Set<Access> access) throws IOException {
        Path file = Files.createTempFile(tempDir, "region", ".pm");
        MemorySegment segment;
        try (FileChannel ch = FileChannel.open(file, StandardOpenOption.READ, StandardOpenOption.WRITE)) {
            ch.truncate(size);
            segment = ch.map(FileChannel.MapMode.READ_WRITE, 0, size, arena);
        }
        return target.register(segment, RegisterOptions.of(access).withBacking(new Backing(file, 0)));
    }

    /** Anonymous memory registered on the initiator for local use. */
    protected MemoryRegion initiatorBuffer(long size) {
        return initiator.registerLocal(arena.allocate(size, 64));
    }

    /** Connects an initiator endpoint to the target; returns {initiator side, target side}. */
    protected Endpoint[] connectPair() throws InterruptedException {
        Endpoint client = closeLater(initiator.createEndpoint());
        Thread connector = Thread.ofPlatform().start(() -> client.connect(listener.uri(), new byte[] {1, 2, 3}));
        var request = listener.accept(10, TimeUnit.SECONDS);
        assertThat(request).as("connection request").isNotNull();
        assertThat(request.privateData()).containsExactly(1, 2, 3);
        Endpoint server = closeLater(target.createEndpoint());
        request.accept(server, new byte[] {9});
        connector.join(10_000);
        assertThat(client.state()).isEqualTo(Endpoint.State.CONNECTED);
        assertThat(client.peerPrivateData()).containsExactly(9);
        return new Endpoint[] {client, server};
    }

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
            assertThat(local.segment().asSlice(1024, 64).toArray(ValueLayout.JAVA_BYTE))
                    .containsExactly(local.segment().asSlice(0, 64).toArray(ValueLayout.JAVA_BYTE));
            assertThat(remote.segment().get(ValueLayout.JAVA_BYTE, 128 + 5)).isEqualTo((byte) 36);
        }
    }
}
