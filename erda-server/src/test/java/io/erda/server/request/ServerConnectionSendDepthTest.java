package io.erda.server.request;

import static org.assertj.core.api.Assertions.assertThat;

import io.erda.fabric.Completion;
import io.erda.fabric.CompletionQueue;
import io.erda.fabric.ConnectionRequest;
import io.erda.fabric.Endpoint;
import io.erda.fabric.EndpointOptions;
import io.erda.fabric.Fabric;
import io.erda.fabric.Listener;
import io.erda.fabric.MemoryRegion;
import io.erda.fabric.RecvRequest;
import io.erda.protocol.MessageHeader;
import io.erda.protocol.MessageType;
import io.erda.protocol.WireStatus;
import java.lang.foreign.Arena;
import java.net.URI;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * A connection never posts more SENDs than its send depth, however slowly their completions come: over tcp, to a
 * client that has posted no receive yet (its SENDs stay outstanding until it does), replies in buffers of their own
 * (a large GET value's) fill the queue to the depth, {@link ServerConnection#canReply} then says no instead of the
 * endpoint refusing the post ("send queue full"), and completions make room again.
 */
class ServerConnectionSendDepthTest {
    private static final URI ANY_PORT = URI.create("tcp://127.0.0.1:0");
    private static final int SLOT = 64;
    /** Larger than a reply slot: each reply goes out of a buffer of its own. */
    private static final int BIG_BODY = 4096;

    @Test
    @Timeout(60)
    void ownBufferRepliesFillTheQueueToItsDepthAndCompletionsMakeRoom() throws Exception {
        try (Fabric serverFabric = Fabric.open(ANY_PORT); Fabric clientFabric = Fabric.open(ANY_PORT);
             Listener listener = serverFabric.listen(ANY_PORT); Arena arena = Arena.ofShared()) {
            CompletionQueue sends = serverFabric.createCompletionQueue(256);
            CompletionQueue receives = serverFabric.createCompletionQueue(256);
            ReceiveBuffers buffers = ReceiveBuffers.dram(serverFabric, SLOT);
            int depth = buffers.count() + 3;
            Endpoint client = clientFabric.createEndpoint(EndpointOptions.defaults()
                    .withRnrTimeout(Duration.ofSeconds(30)));
            Thread connector = Thread.ofPlatform().start(() -> client.connect(listener.uri(), new byte[0]));
            ConnectionRequest request = listener.accept(10, TimeUnit.SECONDS);
            assertThat(request).as("connection request").isNotNull();
            Endpoint server = serverFabric.createEndpoint(EndpointOptions.defaults().withQueues(sends, receives)
                    .withDepth(depth, buffers.count()));
            request.accept(server, new byte[0]);
            connector.join(10_000);
            assertThat(client.state()).isEqualTo(Endpoint.State.CONNECTED);
            ServerConnection connection = new ServerConnection(serverFabric, server, depth, c -> (r, replies) -> { },
                    null, buffers, SLOT);
            try {
                int posted = 0;
                while (connection.canReply(0, BIG_BODY)) {
                    int id = posted;
                    connection.reply(0, id, MessageType.GET_REPLY, WireStatus.OK, BIG_BODY, (s, o) -> {
                        s.asSlice(o, BIG_BODY).fill((byte) id);
                        return BIG_BODY;
                    });
                    posted++;
                    assertThat(posted).as("replies posted before canReply said no").isLessThanOrEqualTo(depth);
                }
                assertThat(posted).as("replies outstanding when canReply says no").isEqualTo(depth);
                assertThat(server.state()).isEqualTo(Endpoint.State.CONNECTED);

                // the client posts its receives: every reply arrives whole and in order, and each completion
                // gives its room back
                int size = MessageHeader.LENGTH + BIG_BODY;
                MemoryRegion into = clientFabric.registerLocal(arena.allocate((long) depth * size, 64));
                for (int i = 0; i < depth; i++) {
                    client.postRecv(new RecvRequest(i, into, (long) i * size, size));
                }
                int completed = 0;
                long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
                while (completed < depth && System.nanoTime() < deadline) {
                    Completion c = sends.take(100, TimeUnit.MILLISECONDS);
                    if (c != null) {
                        assertThat(connection.sendCompleted(c)).as("completion %s", c).isTrue();
                        completed++;
                    }
                }
                assertThat(completed).as("send completions").isEqualTo(depth);
                assertThat(connection.canReply(0, BIG_BODY)).as("room after the completions").isTrue();
                CompletionQueue clientReceives = client.recvQueue();
                for (int i = 0; i < depth; i++) {
                    Completion c = clientReceives.take(5, TimeUnit.SECONDS);
                    assertThat(c).as("receive %d", i).isNotNull();
                    assertThat(c.isSuccess()).isTrue();
                    long at = c.wrId() * size;
                    assertThat(MessageHeader.requestId(into.segment(), at)).isEqualTo((int) c.wrId());
                    assertThat(into.segment().get(java.lang.foreign.ValueLayout.JAVA_BYTE, at + size - 1))
                            .isEqualTo((byte) c.wrId());
                }
            } finally {
                connection.close();
                client.close();
                sends.close();
                receives.close();
            }
        }
    }
}
