/**
 * A cluster on this machine (docs/ARCHITECTURE.md, [cluster]), for erda-cluster's tests and erda-bench's cluster demo,
 * bench and nemesis: a real single ZooKeeper server in this process ({@link io.erda.cluster.harness.ZooKeeperMain},
 * Curator's {@code TestingServer}); member processes ({@link io.erda.cluster.harness.MemberProcess}, and
 * {@link io.erda.cluster.harness.ClusterDemo}'s members with stores under a scratch directory and
 * {@code killPrimaryUnderLoad}); a TCP relay to ZooKeeper that can be cut ({@link io.erda.cluster.harness.ZkLink});
 * and writers that remember each acknowledged PUT, for the lost count ({@link io.erda.cluster.harness.VerifyingLoad}).
 *
 * <p>A module of its own so that neither the members' nor the clients' main class path carries curator-test and an
 * in-process ZooKeeper server: erda-cluster depends on it in test scope only, erda-bench (benchmarks and demos) in
 * compile scope. May depend on erda-cluster-client, erda-client, erda-protocol (key hashing), erda-test-support (the
 * launcher), curator-test and ZooKeeper; never on erda-cluster: a member process runs
 * {@code io.erda.cluster.ClusterServerMain} by name, from the caller's class path.
 */
package io.erda.cluster.harness;
