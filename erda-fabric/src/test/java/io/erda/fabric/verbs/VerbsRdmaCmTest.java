package io.erda.fabric.verbs;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.erda.fabric.Completion;
import io.erda.fabric.ConnectionRequest;
import io.erda.fabric.Endpoint;
import io.erda.fabric.Fabric;
import io.erda.fabric.FabricException;
import io.erda.fabric.Listener;
import io.erda.fabric.MemoryRegion;
import io.erda.fabric.RecvRequest;
import io.erda.fabric.Status;
import java.lang.foreign.Arena;
import java.net.URI;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** Connection set-up through rdma_cm on the software RNIC's CM: what the conformance suite does not single out. */
@Timeout(value = 30, unit = TimeUnit.SECONDS)
class VerbsRdmaCmTest {
    private static final Map<String, String> RDMA_CM = Map.of(VerbsProperties.DEVICE, VerbsProperties.SOFT_DEVICE,
            VerbsProperties.CONNECTION_MANAGER, VerbsProperties.CM_RDMACM);
    private static final URI ANY_PORT = URI.create("verbs://127.0.0.1:0");

    private final Fabric initiator = Fabric.open(ANY_PORT, RDMA_CM);
    private Fabric target = Fabric.open(ANY_PORT, RDMA_CM);
    private final Listener listener = target.listen(ANY_PORT);
    private final Arena arena = Arena.ofShared();

    @AfterEach
    void close() {
        initiator.close();
        target.close();
        arena.close();
    }

    /** Connects with {@code hello}; {@code answer} accepts or rejects; returns what the connecting thread threw. */
    private List<Throwable> connect(Endpoint client, byte[] hello, Function<ConnectionRequest, Endpoint> answer)
            throws InterruptedException {
        List<Throwable> thrown = new CopyOnWriteArrayList<>();
        Thread connector = Thread.ofPlatform().start(() -> {
            try {
                client.connect(listener.uri(), hello);
            } catch (Throwable t) {
                thrown.add(t);
            }
        });
        ConnectionRequest request = listener.accept(10, TimeUnit.SECONDS);
        assertThat(request).as("connection request").isNotNull();
        answer.apply(request);
        connector.join(10_000);
        return thrown;
    }

    /**
     * A connection still waiting for the peer's answer when its fabric closes: the channel's close tells the
     * connection first, which destroys its id under its own lock and wakes the waiter, so connect fails at once with
     * the reason and nothing destroys the id a second time or uses it after the channel is gone (on librdmacm that
     * was a SIGSEGV in rdma_destroy_id, which reads the id's channel).
     */
    @Test
    void closingTheFabricDuringSetUpFailsTheConnectOnceAndPromptly() throws Exception {
        Endpoint client = initiator.createEndpoint();
        List<Throwable> thrown = new CopyOnWriteArrayList<>();
        Thread connector = Thread.ofPlatform().start(() -> {
            try {
                client.connect(listener.uri(), new byte[] {1});
            } catch (Throwable t) {
                thrown.add(t);
            }
        });
        assertThat(listener.accept(10, TimeUnit.SECONDS)).as("the request arrives; nobody answers it").isNotNull();
        long start = System.nanoTime();
        initiator.close();
        connector.join(10_000);
        assertThat(connector.isAlive()).isFalse();
        assertThat(TimeUnit.NANOSECONDS.toSeconds(System.nanoTime() - start)).isLessThan(10);
        assertThat(thrown).singleElement().isInstanceOf(FabricException.class)
                .extracting(Throwable::getMessage).asString()
                .contains("the fabric closed while waiting for RDMA_CM_EVENT_CONNECT_RESPONSE");
    }

    @Test
    void privateDataTravelsBothWaysExactlyThoughTheCmPadsIt() throws Exception {
        Endpoint client = initiator.createEndpoint();
        byte[][] seen = new byte[1][];
        Endpoint[] server = new Endpoint[1];
        List<Throwable> thrown = connect(client, new byte[] {0, 7, 0}, request -> {
            seen[0] = request.privateData();
            server[0] = target.createEndpoint();
            request.accept(server[0], new byte[] {0, 0, 5, 0});
            return server[0];
        });
        assertThat(thrown).isEmpty();
        assertThat(seen[0]).containsExactly(0, 7, 0); // trailing zero survives the REQ's zero padding to 56 bytes
        assertThat(client.peerPrivateData()).containsExactly(0, 0, 5, 0);
        assertThat(server[0].peerPrivateData()).containsExactly(0, 7, 0);
        assertThat(server[0].state()).isEqualTo(Endpoint.State.CONNECTED);
    }

    @Test
    void rejectReasonTravelsAndALongOneIsCutToTheRejectMessage() throws Exception {
        Endpoint client = initiator.createEndpoint();
        String reason = "server full: " + "x".repeat(300);
        List<Throwable> thrown = connect(client, new byte[0], request -> {
            request.reject(reason);
            return null;
        });
        assertThat(thrown).singleElement().isInstanceOf(FabricException.class).extracting(Throwable::getMessage)
                .asString().contains("rejected: server full: xxx")
                .contains(reason.substring(0, CmPrivateData.REJECT_LIMIT - CmPrivateData.HEADER_LENGTH))
                .doesNotContain(reason);
        assertThat(client.state()).isEqualTo(Endpoint.State.IDLE);
    }

    @Test
    void connectingWhereNobodyListensIsRejectedByTheCm() throws Exception {
        URI closed = listener.uri();
        listener.close();
        Endpoint client = initiator.createEndpoint();
        assertThatThrownBy(() -> client.connect(closed, new byte[0]))
                .isInstanceOf(FabricException.class).hasMessageContaining("nobody listens on that port");
    }

    @Test
    void peerGoingAwayDisconnectsAndFlushesPostedReceives() throws Exception {
        MemoryRegion buffer = initiator.registerLocal(arena.allocate(256, 64));
        Endpoint client = initiator.createEndpoint();
        for (int i = 0; i < 3; i++) {
            client.postRecv(new RecvRequest(i, buffer, i * 64L, 64));
        }
        List<Throwable> thrown = connect(client, new byte[0], request -> {
            Endpoint server = target.createEndpoint();
            request.accept(server, new byte[0]);
            return server;
        });
        assertThat(thrown).isEmpty();
        assertThat(client.state()).isEqualTo(Endpoint.State.CONNECTED);

        target.close(); // destroys the server's id and QP: the client gets DISCONNECTED from its CM
        target = Fabric.open(ANY_PORT, RDMA_CM);

        for (int i = 0; i < 3; i++) {
            Completion c = client.recvQueue().take(10, TimeUnit.SECONDS);
            assertThat(c).as("flushed receive %d", i).isNotNull();
            assertThat(c.wrId()).isEqualTo(i);
            assertThat(c.status()).isEqualTo(Status.WR_FLUSH_ERROR);
        }
        assertThat(client.state()).isEqualTo(Endpoint.State.ERROR);
    }
}
