/**
 * The Erda server's command line and assembly: {@link ErdaServerMain} (the {@code erda-server} command and its offline
 * subcommands), {@link ServerOptions} (the options every server command shares), {@link ServerConfig} (what a server is
 * started with; {@link ServerConfig#openStore} opens its store) and {@link RequestServer}, which builds a running server
 * from the other packages, registers its protocols (Erda's and the baselines') and closes it; {@code StatsReport}
 * writes the STATS text from all of them.
 *
 * <p>The rooms it assembles: {@link io.erda.server.store} (the state served: table, logs, leases, recovery, region
 * registrations, the cleaner's host), {@link io.erda.server.request} (listener, connections, workers, dispatch, the
 * Erda protocol), {@link io.erda.server.baseline} (the two baselines of paper §5.1), {@link io.erda.server.platform}
 * (huge pages, power-failure emulation) and {@link io.erda.server.offline} (the offline commands). What a client can
 * rely on, the wire contract this server implements, is the package Javadoc of {@code io.erda.protocol}.
 *
 * <p>May depend on erda-core, erda-protocol, erda-fabric (the SPI only: {@code io.erda.fabric}), erda-cleaner,
 * picocli and every package of the server; nothing of the server depends on this one. Never on a fabric provider's
 * package or on client code.
 */
package io.erda.server;
