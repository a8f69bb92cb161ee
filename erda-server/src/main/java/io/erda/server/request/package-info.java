/**
 * The request path of a server: {@link io.erda.server.request.RequestPath} (the listener, the two completion queues
 * every connection shares and the threads that serve them: {@code Acceptor}, {@code Workers}, with
 * {@code CompletionBudget} and {@code Connections}), {@link io.erda.server.request.ServerConnection} (receive slots,
 * replies, HEAD_STATE credits), {@code RequestDispatcher} (exactly one reply per message, [bad-input]),
 * {@code RequestCpu} (server_cpu_ns per request), and the protocols: {@link io.erda.server.request.Protocols}
 * registers a {@link io.erda.server.request.Protocol} per protocol number, whose
 * {@link io.erda.server.request.ProtocolHandler} answers a connection's requests.
 * {@link io.erda.server.request.ErdaProtocolHandler} is Erda's (HELLO, PUT, GET, FLUSH, HEADS, REPAIR_HINT, STATS,
 * CLEAN), asking {@link io.erda.server.request.Replication} around each PUT in a cluster ([cluster]).
 *
 * <p>May depend on erda-core, erda-protocol, the fabric SPI ({@code io.erda.fabric}), erda-cleaner (a CLEAN's report)
 * and {@code io.erda.server.store}; never on the baselines ({@code io.erda.server.baseline}: they come in as registered
 * protocols) or on the assembly and command line ({@code io.erda.server}).
 */
package io.erda.server.request;
