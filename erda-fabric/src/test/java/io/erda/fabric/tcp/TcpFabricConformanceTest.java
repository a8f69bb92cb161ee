package io.erda.fabric.tcp;

import static org.assertj.core.api.Assertions.assertThat;

import io.erda.fabric.Access;
import io.erda.fabric.ConnectionRequest;
import io.erda.fabric.Endpoint;
import io.erda.fabric.FabricStats;
import io.erda.fabric.MemoryRegion;
import io.erda.fabric.SyncEndpoint;
import io.erda.fabric.conformance.FabricConformanceTest;
import io.erda.fabric.tcp.wire.FrameHeader;
import io.erda.fabric.tcp.wire.WireOpcode;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.Socket;
import java.net.URI;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * The conformance suite on the tcp software RNIC over loopback, plus what only tcp has: a wire that a hostile or
 * broken peer can feed anything, and an engine whose CPU time is measured apart from the application's.
 */
class TcpFabricConformanceTest extends FabricConformanceTest {
    @Override
    protected URI listenUri(Path tempDir) {
        return URI.create("tcp://127.0.0.1:0");
    }

    @Test
    void listenerOnPortZeroReportsTheRealPort() {
        assertThat(listener.uri().getScheme()).isEqualTo("tcp");
        assertThat(listener.uri().getPort()).isPositive();
    }

    @Test
    void engineCountsItsCpuTimeOneSidedOperationsAndBytesWritten() throws Exception {
        MemoryRegion remote = targetMemory(4096, Access.all());
        MemoryRegion local = initiatorBuffer(4096);
        Endpoint[] pair = connectPair();
        FabricStats before = target.stats();
        try (SyncEndpoint sync = new SyncEndpoint(pair[0])) {
            for (int i = 0; i < 500; i++) {
                sync.write(local, 0, 100, remote.address(), remote.rkey());
                sync.read(local, 0, 64, remote.address(), remote.rkey());
            }
            sync.fetchAdd(remote.address() + 512, remote.rkey(), 1);
        }
        FabricStats after = target.stats();
        assertThat(after.engineCpuNanos()).isGreaterThan(before.engineCpuNanos());
        assertThat(after.oneSidedExecuted() - before.oneSidedExecuted()).isEqualTo(1001);
        assertThat(after.bytesWrittenByPeers() - before.bytesWrittenByPeers()).isEqualTo(500 * 100 + 8);
        assertThat(after.bytesReadByPeers() - before.bytesReadByPeers()).isEqualTo(500 * 64);
        assertThat(remote.remoteBytesWritten()).isEqualTo(500 * 100 + 8);
    }

    @Test
    void garbageAndSilentSocketsAtTheListenerDoNotStopOthersConnecting() throws Exception {
        byte[] garbage = new byte[4096];
        ThreadLocalRandom.current().nextBytes(garbage);
        try (Socket noise = new Socket("127.0.0.1", listener.uri().getPort());
             Socket silent = new Socket("127.0.0.1", listener.uri().getPort());
             Socket oversized = new Socket("127.0.0.1", listener.uri().getPort())) {
            noise.getOutputStream().write(garbage);
            oversized.getOutputStream().write(header(new FrameHeader().reset(WireOpcode.CONNECT).payloadLength(1 << 30)));
            assertThat(closedByPeer(noise)).as("listener closes the garbage socket").isTrue();
            assertThat(closedByPeer(oversized)).as("listener closes the oversized CONNECT").isTrue();
            writeThenReadWorksOnAFreshConnection();
            assertThat(silent.isClosed()).isFalse();
        }
    }

    @ParameterizedTest
    @ValueSource(strings = {"garbage", "payload over the limit", "READ over the limit", "unknown opcode",
            "response instead of a request", "half-closed mid-header", "half-closed mid-payload"})
    void badInputOnAnEstablishedConnectionClosesOnlyThatConnection(String kind) throws Exception {
        MemoryRegion remote = targetMemory(4096, Access.all());
        try (Socket fwd = new Socket("127.0.0.1", listener.uri().getPort());
             Socket rev = new Socket("127.0.0.1", listener.uri().getPort())) {
            fwd.setSoTimeout(10_000);
            fwd.getOutputStream().write(header(new FrameHeader().reset(WireOpcode.CONNECT).sequence(42).compareAdd(1_000_000)));
            rev.getOutputStream().write(header(new FrameHeader().reset(WireOpcode.ATTACH).sequence(42)));
            ConnectionRequest request = listener.accept(WAIT_SECONDS, TimeUnit.SECONDS);
            Endpoint server = closeLater(target.createEndpoint());
            request.accept(server, new byte[0]);
            InputStream in = fwd.getInputStream();
            assertThat(in.readNBytes(FrameHeader.LENGTH)).hasSize(FrameHeader.LENGTH); // ACCEPT
            assertThat(server.state()).isEqualTo(Endpoint.State.CONNECTED);

            OutputStream out = fwd.getOutputStream();
            FrameHeader h = new FrameHeader();
            switch (kind) {
                case "garbage" -> {
                    byte[] g = new byte[FrameHeader.LENGTH * 3];
                    ThreadLocalRandom.current().nextBytes(g);
                    out.write(g);
                }
                case "payload over the limit" -> out.write(header(h.reset(WireOpcode.WRITE).rkey(remote.rkey())
                        .remoteAddress(remote.address()).payloadLength(FrameHeader.MAX_PAYLOAD + 1)));
                case "READ over the limit" -> out.write(header(h.reset(WireOpcode.READ).rkey(remote.rkey())
                        .remoteAddress(remote.address()).operandLength(FrameHeader.MAX_PAYLOAD + 1)));
                case "unknown opcode" -> out.write(header(h.reset((byte) 0x55)));
                case "response instead of a request" -> out.write(header(h.reset((byte) (WireOpcode.READ | WireOpcode.RESPONSE))));
                case "half-closed mid-header" -> {
                    out.write(Arrays.copyOf(header(h.reset(WireOpcode.READ)), 10));
                    fwd.shutdownOutput();
                }
                case "half-closed mid-payload" -> {
                    out.write(header(h.reset(WireOpcode.WRITE).rkey(remote.rkey()).remoteAddress(remote.address()).payloadLength(1000)));
                    out.write(new byte[10]);
                    fwd.shutdownOutput();
                }
                default -> throw new IllegalArgumentException(kind);
            }
            out.flush();
            awaitState(server, Endpoint.State.ERROR);
            writeThenReadWorksOnAFreshConnection();
        }
    }

    private void writeThenReadWorksOnAFreshConnection() throws Exception {
        MemoryRegion remote = targetMemory(4096, Access.all());
        MemoryRegion local = initiatorBuffer(4096);
        fill(local.segment(), 0, 128, 3);
        try (SyncEndpoint sync = new SyncEndpoint(connectPair()[0])) {
            sync.write(local, 0, 128, remote.address(), remote.rkey());
            sync.read(local, 1024, 128, remote.address(), remote.rkey());
        }
        assertThat(bytes(local.segment(), 1024, 128)).containsExactly(bytes(local.segment(), 0, 128));
    }

    /** End of stream or reset (a close with our unread bytes still queued is a reset). */
    private static boolean closedByPeer(Socket s) throws java.io.IOException {
        s.setSoTimeout(10_000);
        try {
            return s.getInputStream().read() == -1;
        } catch (java.net.SocketException e) {
            return true;
        }
    }

    private static byte[] header(FrameHeader h) {
        byte[] b = new byte[FrameHeader.LENGTH];
        h.buffer().clear().get(b);
        return b;
    }
}
