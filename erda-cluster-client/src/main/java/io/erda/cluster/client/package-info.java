/**
 * The client side of a cluster (docs/ARCHITECTURE.md, [cluster]): the {@code zk://host:port/path} client
 * ({@link io.erda.cluster.client.ClusterClient}, found by {@link io.erda.client.KeyValueClient#connect} through its
 * {@link io.erda.client.ClientProvider}) that routes each key to its shard's primary and WRITEs replicated PUTs to
 * both copies; the shard map ({@link io.erda.cluster.client.ShardMap}) and the ZooKeeper layout it is kept in
 * ({@link io.erda.cluster.client.Zk}); what a process knows of the cluster ({@link io.erda.cluster.client.ClusterView},
 * kept current by watches); the client's lease on its map ({@link io.erda.cluster.client.MapLease}, the client half of
 * fencing, whose {@code promotionWaitNanos} the members wait out); closing a member's connection off ZooKeeper's event
 * thread ({@link io.erda.cluster.client.DetachedClose}); and the members' secret
 * ({@link io.erda.cluster.client.ZkSecret}). The members (module erda-cluster) build on the same classes.
 *
 * <p>A module of its own so that whoever only speaks {@code zk://} (erda-cli, the YCSB binding) needs neither the
 * member server, its store and cleaner, nor an in-process ZooKeeper server. May depend on erda-client, erda-protocol
 * (with its remote-memory format: key hashing for routing), erda-fabric, Curator and the ZooKeeper client; never on
 * erda-core, erda-server or erda-cleaner, nor on the members' package {@code io.erda.cluster}.
 */
package io.erda.cluster.client;
