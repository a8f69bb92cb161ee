package io.erda.fabric.tcp;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.erda.fabric.Completion;
import io.erda.fabric.Endpoint;
import io.erda.fabric.Fabric;
import io.erda.fabric.FabricException;
import io.erda.fabric.MemoryRegion;
import io.erda.fabric.RecvRequest;
import io.erda.fabric.Status;
import io.erda.fabric.SyncEndpoint;
import io.erda.fabric.WorkRequest;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.lang.foreign.Arena;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Real partitions: the peer is a child JVM in another network namespace ({@link NetworkNamespace},
 * {@link PartitionPeer}), and the link between them is cut or blackholed in the kernel, so neither side's TCP stack
 * hears anything more: no FIN, no RST, no ICMP. TCP alone would notice after many minutes; the provider's heartbeats
 * must, within the peer timeout, on both sides. A connect to an address that swallows the handshake fails within the
 * connect timeout.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class TcpPartitionTest {
    private static final long PEER_TIMEOUT_MS = 1000;

    @Test
    void cuttingTheLinkOfAnEstablishedConnectionFailsBothEndsWithinThePeerTimeout() throws Exception {
        try (NetworkNamespace ns = NetworkNamespace.createOrSkip();
             Arena arena = Arena.ofShared();
             Fabric fabric = Fabric.open(URI.create("tcp://" + ns.hostAddress() + ":0"),
                     Map.of(TcpSettings.PEER_TIMEOUT, Long.toString(PEER_TIMEOUT_MS)))) {
            String java = ProcessHandle.current().info().command().orElseThrow();
            Process peer = ns.inside(List.of(java, "--enable-native-access=ALL-UNNAMED", "-cp",
                            System.getProperty("java.class.path"), PartitionPeer.class.getName(), ns.peerAddress(),
                            Long.toString(PEER_TIMEOUT_MS)))
                    .redirectError(ProcessBuilder.Redirect.INHERIT).start();
            try {
                var out = new BufferedReader(new InputStreamReader(peer.getInputStream(), StandardCharsets.UTF_8));
                String[] ready = out.readLine().split(" ");
                assertThat(ready[0]).isEqualTo("READY");
                URI uri = URI.create(ready[1]);
                long address = Long.parseLong(ready[2]);
                int rkey = Integer.parseInt(ready[3]);
                CompletableFuture<String> peerReport = CompletableFuture.supplyAsync(() -> {
                    try {
                        return out.readLine();
                    } catch (java.io.IOException e) {
                        return e.toString();
                    }
                });

                MemoryRegion local = fabric.registerLocal(arena.allocate(4096, 64));
                Endpoint endpoint = fabric.createEndpoint();
                endpoint.connect(uri, new byte[0]);
                SyncEndpoint sync = new SyncEndpoint(endpoint, Duration.ofSeconds(10));
                assertThat(sync.fetchAdd(address, rkey, 5)).isZero();
                Thread.sleep(3 * PEER_TIMEOUT_MS); // idle, kept up by heartbeats across the link
                assertThat(sync.fetchAdd(address, rkey, 1)).isEqualTo(5);

                ns.cut();
                long cut = System.nanoTime();
                endpoint.postRecv(new RecvRequest(10, local, 0, 64));
                endpoint.post(WorkRequest.read(11, local, 64, 64, address, rkey));
                Completion read = endpoint.sendQueue().take(20, TimeUnit.SECONDS);
                long elapsedMs = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - cut);
                assertThat(read).as("the READ posted across the cut link completes").isNotNull();
                assertThat(read.wrId()).isEqualTo(11);
                assertThat(read.status()).isEqualTo(Status.RETRY_EXCEEDED);
                assertThat(read.detail()).contains("peer timeout of " + PEER_TIMEOUT_MS + " ms", ns.peerAddress());
                // silence is counted from the last heartbeat, at most a fifth of the timeout before the cut
                assertThat(elapsedMs).as("detected by the timeout, not by an error from the link")
                        .isBetween(PEER_TIMEOUT_MS * 4 / 5 - 50, PEER_TIMEOUT_MS + PEER_TIMEOUT_MS / 5 + 2000);
                assertThat(endpoint.state()).isEqualTo(Endpoint.State.ERROR);
                assertThat(endpoint.recvQueue().take(10, TimeUnit.SECONDS).status()).isEqualTo(Status.WR_FLUSH_ERROR);

                String report = peerReport.get(20, TimeUnit.SECONDS);
                assertThat(report).as("the peer, on the other side of the cut, fails its end too")
                        .startsWith("BROKEN WR_FLUSH_ERROR").contains("peer timeout of " + PEER_TIMEOUT_MS + " ms");
                sync.close();
                endpoint.close();
            } finally {
                peer.destroyForcibly();
                peer.waitFor(30, TimeUnit.SECONDS);
            }
        }
    }

    @Test
    void connectingToAnAddressThatSwallowsTheHandshakeFailsWithinTheConnectTimeout() throws Exception {
        try (NetworkNamespace ns = NetworkNamespace.createOrSkip();
             Fabric fabric = Fabric.open(URI.create("tcp://" + ns.hostAddress() + ":0"),
                     Map.of(TcpSettings.CONNECT_TIMEOUT, "1500"))) {
            ns.blackholeReplies();
            Endpoint endpoint = fabric.createEndpoint();
            long start = System.nanoTime();
            assertThatThrownBy(() -> endpoint.connect(URI.create("tcp://" + ns.peerAddress() + ":7100"), new byte[0]))
                    .isInstanceOf(FabricException.class)
                    .hasMessageContaining("timed out: no TCP connection from")
                    .hasMessageContaining(ns.peerAddress() + ":7100")
                    .hasMessageContaining("connect timeout of 1500 ms");
            long elapsedMs = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start);
            assertThat(elapsedMs).as("it waited for the timeout: nothing refused it").isBetween(1400L, 6000L);
            assertThat(endpoint.state()).isEqualTo(Endpoint.State.IDLE);
        }
    }
}
