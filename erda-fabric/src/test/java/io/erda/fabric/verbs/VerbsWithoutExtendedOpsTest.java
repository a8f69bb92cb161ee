package io.erda.fabric.verbs;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.erda.fabric.Access;
import io.erda.fabric.ConnectionRequest;
import io.erda.fabric.Endpoint;
import io.erda.fabric.EndpointOptions;
import io.erda.fabric.FabricException;
import io.erda.fabric.Listener;
import io.erda.fabric.MemoryRegion;
import io.erda.fabric.RegisterOptions;
import io.erda.fabric.SyncEndpoint;
import io.erda.fabric.WorkRequest;
import java.lang.foreign.Arena;
import java.lang.foreign.ValueLayout;
import java.net.URI;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * A library without the extended send API (rdma-core older than 44, or unknown): QPs come from ibv_create_qp,
 * ATOMIC_WRITE is refused at post time with the reason, FLUSH falls back to the READ emulation.
 */
@Timeout(value = 30, unit = TimeUnit.SECONDS)
class VerbsWithoutExtendedOpsTest {
    private final VerbsProperties properties = VerbsProperties.parse(Map.of(VerbsProperties.DEVICE, VerbsProperties.SOFT_DEVICE));
    private final VerbsFabric target = VerbsFabric.openSoft(properties, 0);
    private final VerbsFabric initiator = VerbsFabric.openSoft(properties, 0);
    private final Arena arena = Arena.ofShared();

    @AfterEach
    void close() {
        initiator.close();
        target.close();
        arena.close();
    }

    private Endpoint connect() throws InterruptedException {
        Listener listener = target.listen(URI.create("verbs://127.0.0.1:0"));
        Endpoint client = initiator.createEndpoint(EndpointOptions.defaults());
        Thread connector = Thread.ofPlatform().start(() -> client.connect(listener.uri(), new byte[0]));
        ConnectionRequest request = listener.accept(10, TimeUnit.SECONDS);
        request.accept(target.createEndpoint(EndpointOptions.defaults()), new byte[0]);
        connector.join(10_000);
        assertThat(client.state()).isEqualTo(Endpoint.State.CONNECTED);
        return client;
    }

    @Test
    void atomicWriteIsRefusedWithTheReasonAndNothingIsPosted() throws Exception {
        MemoryRegion remote = target.register(arena.allocate(4096, 64), RegisterOptions.of(Access.all()));
        remote.segment().set(ValueLayout.JAVA_LONG, 0, 9L);
        Endpoint client = connect();
        assertThatThrownBy(() -> client.post(WorkRequest.atomicWrite(1, remote.address(), remote.rkey(), 1L)))
                .isInstanceOf(FabricException.class)
                .hasMessageContaining("ATOMIC_WRITE is not supported by RDMA device")
                .hasMessageContaining("rdma-core unknown")
                .hasMessageContaining("it lacks rdma-core >= 44 (ibv_wr_atomic_write)");
        assertThat(initiator.capabilities().atomicWrite()).isFalse();
        assertThat(client.sendQueue().poll()).isNull();
        assertThat(client.state()).isEqualTo(Endpoint.State.CONNECTED);
        assertThat(remote.segment().get(ValueLayout.JAVA_LONG, 0)).isEqualTo(9L);
    }

    @Test
    void flushIsStillEmulatedByARead() throws Exception {
        MemoryRegion remote = target.register(arena.allocate(4096, 64), RegisterOptions.of(Access.all()));
        MemoryRegion local = initiator.registerLocal(arena.allocate(64, 64));
        local.segment().set(ValueLayout.JAVA_LONG, 0, 42L);
        Endpoint client = connect();
        try (SyncEndpoint sync = new SyncEndpoint(client)) {
            sync.write(local, 0, 8, remote.address() + 8, remote.rkey());
            sync.flush(remote.address(), 64, remote.rkey());
        }
        assertThat(remote.segment().get(ValueLayout.JAVA_LONG, 8)).isEqualTo(42L);
    }
}
