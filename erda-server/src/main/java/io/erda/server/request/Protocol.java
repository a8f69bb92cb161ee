package io.erda.server.request;

import io.erda.fabric.Fabric;
import java.util.function.BiFunction;
import java.util.function.Supplier;

/**
 * A protocol the server speaks (chosen per connection by the connect private data, {@code ConnectData}), as the
 * request path sees it. The assembly ({@code RequestServer}) registers one per protocol in {@link Protocols}: Erda's,
 * and the baselines' ({@code io.erda.server.baseline.Baselines}).
 *
 * @param receiveBuffers where a new connection's requests land (DRAM of its own, or a lane of a PM log); closed with it
 * @param replySize      bytes of each of a connection's reply slots (a larger reply goes out of a buffer of its own)
 * @param headStates     whether its connections are told of head state changes (HEAD_STATE, paper §4.4): Erda's
 *                       clients read the head array and keep a receive posted for it; the baselines' clients GET
 *                       two-sided and keep none
 * @param handlers       the handler of a connection's requests, which arrive in the receive buffers taken for it
 */
public record Protocol(Supplier<ReceiveBuffers> receiveBuffers, int replySize, boolean headStates,
                       BiFunction<ServerConnection, ReceiveBuffers, ProtocolHandler> handlers) {
    /**
     * A protocol whose requests land in DRAM buffers of each connection's own ({@link ReceiveBuffers#dram}), with reply
     * slots as large as the largest request.
     */
    public static Protocol inDram(Fabric fabric, boolean headStates,
                                  BiFunction<ServerConnection, ReceiveBuffers, ProtocolHandler> handlers) {
        return new Protocol(() -> ReceiveBuffers.dram(fabric), Request.MAX_MESSAGE_LENGTH, headStates, handlers);
    }
}
