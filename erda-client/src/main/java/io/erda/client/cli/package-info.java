/**
 * {@code erda-cli}: {@link io.erda.client.cli.ErdaCli}, a redis-cli-like command line (put, get, delete, stats,
 * clean) over a {@link io.erda.client.KeyValueClient} with one connection: an {@link io.erda.client.ErdaClient}, or a
 * cluster's client for a {@code zk://} URI when erda-cluster-client is on the class path.
 *
 * <p>Depends on the public API of {@code io.erda.client}, erda-fabric (its errors) and picocli; never on
 * erda-server.
 */
package io.erda.client.cli;
