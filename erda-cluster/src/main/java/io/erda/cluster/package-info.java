/**
 * Several Erda servers behind one client (docs/ARCHITECTURE.md, [cluster]): a fixed number of shards, each with a
 * primary and a backup on different servers; membership and the shard map in ZooKeeper through Apache Curator
 * (ephemeral registrations, a leader latch electing the one coordinator that writes the map); a server process
 * ({@link io.erda.cluster.ClusterServerMain}) that runs an {@code erda-server} store with a
 * {@link io.erda.server.Replication} taken from the map; and the {@code zk://} client ({@link
 * io.erda.cluster.ClusterClient}) that routes each key to its shard's primary and WRITEs replicated PUTs to both.
 *
 * <p>May depend on erda-core, erda-protocol, erda-server, erda-client, Curator/ZooKeeper and picocli. Nothing in
 * the other modules depends on it: the client finds it through {@link io.erda.client.ClientProvider}.
 */
package io.erda.cluster;
