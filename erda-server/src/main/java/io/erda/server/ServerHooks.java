package io.erda.server;

import io.erda.fabric.ConnectionRequest;
import io.erda.server.request.ProtocolHandler;
import java.util.Objects;
import java.util.concurrent.ThreadFactory;
import java.util.function.UnaryOperator;

/**
 * What an application that embeds a server may put into it: a wrapper of each connection request the listener hands
 * over (admission control, logging), a wrapper of each connection's protocol handler (auditing, tracing) and the
 * factory of the server's long-lived threads (to pin them to cores, give them a priority or a group). The server
 * names each thread it makes ({@code erda-acceptor}, {@code erda-worker-N}, {@code erda-lease-validator},
 * {@code erda-redo-applier}, {@code erda-ring-poller}, {@code erda-cleaner}) and makes it a daemon before starting
 * it; the factory's threads must run the body they are given.
 *
 * @param requests wraps each connection request before the server answers it
 * @param handlers wraps each connection's protocol handler
 * @param threads  makes the server's long-lived threads
 */
public record ServerHooks(UnaryOperator<ConnectionRequest> requests, UnaryOperator<ProtocolHandler> handlers,
                          ThreadFactory threads) {
    /** Nothing wrapped; platform threads. */
    public static final ServerHooks NONE = new ServerHooks(UnaryOperator.identity(), UnaryOperator.identity(),
            Thread.ofPlatform().factory());

    public ServerHooks {
        Objects.requireNonNull(requests, "requests");
        Objects.requireNonNull(handlers, "handlers");
        Objects.requireNonNull(threads, "threads");
    }

    public ServerHooks withRequests(UnaryOperator<ConnectionRequest> value) {
        return new ServerHooks(value, handlers, threads);
    }

    public ServerHooks withHandlers(UnaryOperator<ProtocolHandler> value) {
        return new ServerHooks(requests, value, threads);
    }

    public ServerHooks withThreads(ThreadFactory value) {
        return new ServerHooks(requests, handlers, value);
    }
}
