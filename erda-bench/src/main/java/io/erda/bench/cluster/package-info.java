/**
 * The cluster ([cluster], modules erda-cluster and erda-cluster-client) under YCSB:
 * {@link io.erda.bench.cluster.ClusterYcsbDemo} (run by {@code scripts/erda-cluster-demo}): ZooKeeper
 * ({@link io.erda.bench.cluster.ZooKeeperRun}: Debian's package or an in-process server), member processes, YCSB
 * through the binding with a {@code zk://} URI, kill -9 of a primary under load, and the throughput and latency
 * figures with 1, 2 and 3 servers ({@code --bench}).
 *
 * <p>May depend on erda-cluster-client (the {@code zk://} client, the shard map), erda-cluster-harness (the in-process
 * ZooKeeper, member processes, {@code ZkLink}, {@code VerifyingLoad}), erda-client, the YCSB binding
 * ({@code io.erda.bench.ycsb}) and picocli. erda-cluster is needed on the class path, not in the code: the member
 * processes run its {@code ClusterServerMain} from this JVM's class path.
 */
package io.erda.bench.cluster;
