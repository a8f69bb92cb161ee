/**
 * The members of a cluster (docs/ARCHITECTURE.md, [cluster]): several Erda servers behind one client, a fixed number
 * of shards, each with a primary and a backup on different servers; membership in ZooKeeper through Apache Curator
 * (ephemeral registrations, a leader latch electing the one coordinator that writes the shard map); a server process
 * ({@link io.erda.cluster.ClusterServerMain}) that runs an {@code erda-server} store with a
 * {@link io.erda.server.request.Replication} taken from the map ({@link io.erda.cluster.ClusterServer}), under a lease
 * ({@code MemberLease}, watched by the coordinator's {@code LeaseWatch}), acknowledging PUTs of a shard it newly
 * leads only once clients' map leases ran out ({@code PrimaryTenure}), and publishing its store's identity
 * ({@code StoreIdentity}). The member's parts: the control plane ({@code Coordinator}), what it answers to each PUT
 * ({@code MemberReplication}), each shard as its primary sees it ({@code PrimaryShard}, filling a new backup:
 * {@code BackupFill}) and as its backup does ({@code BackupShard}), its connections to the other members
 * ({@code Peers}), and what they read of the member as it runs ({@code MemberState}).
 *
 * <p>The rest of the cluster lives in two other modules: what the members share with every client (the shard map,
 * the ZooKeeper layout, the secret, and the {@code zk://} client itself) in {@code io.erda.cluster.client}
 * (erda-cluster-client), so that a client needs no member server; and what runs a cluster on one machine for the
 * tests and the demos (an in-process ZooKeeper, member processes) in {@code io.erda.cluster.harness}
 * (erda-cluster-harness), which this module's tests use and its main code does not.
 *
 * <p>May depend on erda-cluster-client, erda-core, erda-protocol (with its remote-memory format), erda-server,
 * erda-client, Curator/ZooKeeper and picocli. Of the other modules only erda-bench depends on it (its cluster demo and
 * nemesis run members); clients need only erda-cluster-client, found through {@link io.erda.client.ClientProvider}.
 */
package io.erda.cluster;
