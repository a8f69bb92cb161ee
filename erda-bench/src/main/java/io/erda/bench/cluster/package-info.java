/**
 * The cluster ([cluster], module erda-cluster) under YCSB: {@link io.erda.bench.cluster.ClusterYcsbDemo} (run by
 * {@code scripts/erda-cluster-demo}): ZooKeeper ({@link io.erda.bench.cluster.ZooKeeperRun}: Debian's package or an
 * in-process server), member processes, YCSB through the binding with a {@code zk://} URI, kill -9 of a primary
 * under load, and the throughput and latency figures with 1, 2 and 3 servers ({@code --bench}).
 *
 * <p>May depend on erda-cluster, erda-client, the YCSB binding ({@code io.erda.bench.ycsb}) and picocli.
 */
package io.erda.bench.cluster;
