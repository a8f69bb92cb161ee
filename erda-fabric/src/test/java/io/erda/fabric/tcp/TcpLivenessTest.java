package io.erda.fabric.tcp;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.erda.fabric.Access;
import io.erda.fabric.Backing;
import io.erda.fabric.Completion;
import io.erda.fabric.ConnectionRequest;
import io.erda.fabric.Endpoint;
import io.erda.fabric.Fabric;
import io.erda.fabric.FabricException;
import io.erda.fabric.Listener;
import io.erda.fabric.MemoryRegion;
import io.erda.fabric.RecvRequest;
import io.erda.fabric.RegisterOptions;
import io.erda.fabric.Status;
import io.erda.fabric.SyncEndpoint;
import io.erda.fabric.WorkRequest;
import io.erda.fabric.tcp.wire.FrameHeader;
import io.erda.fabric.tcp.wire.WireOpcode;
import java.io.DataInputStream;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.URI;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The tcp provider's liveness on loopback, against real tcp fabrics and against a raw peer that completes the
 * handshake and then hangs (its kernel still acknowledges everything, as a hung process's does): heartbeats keep an
 * idle connection up, silence longer than the peer timeout breaks it, and connect gives up after its timeout.
 * Partitions between hosts are {@link TcpPartitionTest}'s.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class TcpLivenessTest {
    private static final URI LOOPBACK = URI.create("tcp://127.0.0.1:0");
    private final Arena arena = Arena.ofShared();
    private final List<AutoCloseable> closeables = new CopyOnWriteArrayList<>();

    @AfterEach
    void close() throws Exception {
        for (int i = closeables.size() - 1; i >= 0; i--) {
            closeables.get(i).close();
        }
        arena.close();
    }

    private <T extends AutoCloseable> T later(T c) {
        closeables.add(c);
        return c;
    }

    @Test
    void anIdleConnectionStaysUpOnTheHeartbeatsOfTheSmallerTimeout() throws Exception {
        Fabric target = later(Fabric.open(LOOPBACK, Map.of(TcpSettings.PEER_TIMEOUT, "300")));
        Fabric initiator = later(Fabric.open(LOOPBACK)); // 5 s: it must heartbeat at the target's pace
        Listener listener = later(target.listen(LOOPBACK));
        Path file = Files.createTempFile("tcp-liveness", ".pm");
        later(() -> Files.deleteIfExists(file));
        MemoryRegion remote = target.register(mappedFile(file), RegisterOptions.of(Access.all()).withBacking(new Backing(file, 0)));
        MemoryRegion local = initiator.registerLocal(arena.allocate(4096, 64));

        Endpoint client = later(initiator.createEndpoint());
        Thread connecting = Thread.ofVirtual().start(() -> client.connect(listener.uri(), new byte[0]));
        ConnectionRequest request = listener.accept(10, TimeUnit.SECONDS);
        Endpoint server = later(target.createEndpoint());
        request.accept(server, new byte[0]);
        connecting.join();

        Thread.sleep(1500); // five times the target's timeout, with nothing to do but heartbeats
        assertThat(client.state()).isEqualTo(Endpoint.State.CONNECTED);
        assertThat(server.state()).isEqualTo(Endpoint.State.CONNECTED);
        try (SyncEndpoint sync = new SyncEndpoint(client, Duration.ofSeconds(10))) {
            assertThat(sync.fetchAdd(remote.address(), remote.rkey(), 7)).isZero();
        }
    }

    private MemorySegment mappedFile(Path file) throws Exception {
        try (FileChannel ch = FileChannel.open(file, StandardOpenOption.READ, StandardOpenOption.WRITE)) {
            ch.truncate(4096);
            return ch.map(FileChannel.MapMode.READ_WRITE, 0, 4096, arena);
        }
    }

    /** A peer process that hangs: accepts, answers the handshake, then neither reads nor writes. */
    private ServerSocket hungPeer(boolean answers) throws Exception {
        ServerSocket server = later(new ServerSocket(0, 50, InetAddress.getLoopbackAddress()));
        Thread.ofVirtual().start(() -> {
            try {
                Socket fwd = later(server.accept());
                Socket rev = later(server.accept());
                for (Socket s : new Socket[] {fwd, rev}) { // CONNECT (with its private data) or ATTACH
                    byte[] header = new DataInputStream(s.getInputStream()).readNBytes(FrameHeader.LENGTH);
                    FrameHeader h = new FrameHeader();
                    h.buffer().put(header).clear();
                    s.getInputStream().readNBytes(h.payloadLength());
                }
                if (answers) {
                    byte[] accept = new byte[FrameHeader.LENGTH];
                    new FrameHeader().reset(WireOpcode.ACCEPT).compareAdd(1_000_000).buffer().clear().get(accept);
                    // which socket carried CONNECT does not matter here: write ACCEPT on the first one accepted
                    fwd.getOutputStream().write(accept);
                }
            } catch (Exception e) {
                // the test closed it
            }
        });
        return server;
    }

    @Test
    void aPeerThatHangsAfterTheHandshakeFailsTheEndpointWithinThePeerTimeout() throws Exception {
        ServerSocket peer = hungPeer(true);
        Fabric initiator = later(Fabric.open(LOOPBACK, Map.of(TcpSettings.PEER_TIMEOUT, "500")));
        MemoryRegion local = initiator.registerLocal(arena.allocate(4096, 64));
        Endpoint endpoint = later(initiator.createEndpoint());
        endpoint.connect(URI.create("tcp://127.0.0.1:" + peer.getLocalPort()), new byte[0]);
        assertThat(endpoint.state()).isEqualTo(Endpoint.State.CONNECTED);

        long start = System.nanoTime();
        endpoint.postRecv(new RecvRequest(1, local, 0, 64));
        endpoint.post(WorkRequest.read(2, local, 64, 8, 4096, 1)); // the hung peer never answers
        Completion read = endpoint.sendQueue().take(10, TimeUnit.SECONDS);
        long elapsedMs = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start);

        assertThat(read).as("the outstanding READ completes").isNotNull();
        assertThat(read.wrId()).isEqualTo(2);
        assertThat(read.status()).isEqualTo(Status.RETRY_EXCEEDED);
        assertThat(read.detail()).contains("peer timeout of 500 ms", TcpSettings.PEER_TIMEOUT, "127.0.0.1");
        assertThat(elapsedMs).as("detected after the timeout, within it plus a heartbeat interval and slack")
                .isBetween(400L, 3000L);
        assertThat(endpoint.state()).isEqualTo(Endpoint.State.ERROR);
        Completion recv = endpoint.recvQueue().take(10, TimeUnit.SECONDS);
        assertThat(recv.status()).isEqualTo(Status.WR_FLUSH_ERROR);
    }

    @Test
    void connectToAListenerThatNeverAnswersFailsWithinTheConnectTimeoutNamingAddressAndTimeout() throws Exception {
        ServerSocket peer = hungPeer(false);
        Fabric initiator = later(Fabric.open(LOOPBACK, Map.of(TcpSettings.CONNECT_TIMEOUT, "700")));
        Endpoint endpoint = later(initiator.createEndpoint());
        long start = System.nanoTime();
        assertThatThrownBy(() -> endpoint.connect(URI.create("tcp://127.0.0.1:" + peer.getLocalPort()), new byte[0]))
                .isInstanceOf(FabricException.class)
                .hasMessageContaining("timed out: no ACCEPT or REJECT from")
                .hasMessageContaining("127.0.0.1:" + peer.getLocalPort())
                .hasMessageContaining("connect timeout of 700 ms (tcp fabric property connectTimeoutMillis)");
        assertThat(TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start)).isBetween(650L, 5000L);
        assertThat(endpoint.state()).isEqualTo(Endpoint.State.IDLE);
    }

    @Test
    void timeoutsThatAreNotPositiveMillisecondsAreRefusedNamingPropertyAndValue() {
        assertThatThrownBy(() -> Fabric.open(LOOPBACK, Map.of(TcpSettings.PEER_TIMEOUT, "0")))
                .isInstanceOf(FabricException.class)
                .hasMessage("tcp fabric property peerTimeoutMillis=0 is not a positive number of milliseconds");
        assertThatThrownBy(() -> Fabric.open(LOOPBACK, Map.of(TcpSettings.CONNECT_TIMEOUT, "5s")))
                .isInstanceOf(FabricException.class)
                .hasMessage("tcp fabric property connectTimeoutMillis=5s is not a positive number of milliseconds");
    }
}
