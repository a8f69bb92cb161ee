package io.erda.fabric.tcp;

import io.erda.fabric.Access;
import io.erda.fabric.Completion;
import io.erda.fabric.ConnectionRequest;
import io.erda.fabric.Endpoint;
import io.erda.fabric.Fabric;
import io.erda.fabric.Listener;
import io.erda.fabric.MemoryRegion;
import io.erda.fabric.RecvRequest;
import java.lang.foreign.Arena;
import java.net.URI;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * The peer of {@link TcpPartitionTest}, run inside the network namespace: listens on {@code tcp://ADDRESS:0} with the
 * peer timeout given, prints {@code READY <uri> <address> <rkey>}, accepts one connection, posts a receive and prints
 * {@code BROKEN <status> <detail>} when it completes (the connection broke), then exits.
 */
public final class PartitionPeer {
    private PartitionPeer() {
    }

    public static void main(String[] args) throws Exception {
        String address = args[0];
        String peerTimeoutMillis = args[1];
        try (Arena arena = Arena.ofShared();
             Fabric fabric = Fabric.open(URI.create("tcp://" + address + ":0"), Map.of(TcpSettings.PEER_TIMEOUT, peerTimeoutMillis));
             Listener listener = fabric.listen(URI.create("tcp://" + address + ":0"))) {
            MemoryRegion memory = fabric.register(arena.allocate(4096, 64), io.erda.fabric.RegisterOptions.of(Access.all()));
            System.out.println("READY " + listener.uri() + " " + memory.address() + " " + memory.rkey());
            System.out.flush();
            ConnectionRequest request = listener.accept(60, TimeUnit.SECONDS);
            Endpoint endpoint = fabric.createEndpoint();
            endpoint.postRecv(new RecvRequest(1, memory, 0, 64));
            request.accept(endpoint, new byte[0]);
            Completion c = endpoint.recvQueue().take(120, TimeUnit.SECONDS);
            System.out.println(c == null ? "NOTHING" : "BROKEN " + c.status() + " " + c.detail());
            System.out.flush();
        }
    }
}
