/**
 * {@code erda-cli}: {@link io.erda.client.cli.ErdaCli}, a redis-cli-like command line (put, get, delete, stats,
 * clean) over an {@link io.erda.client.ErdaClient} with one connection.
 *
 * <p>Depends on the public API of {@code io.erda.client}, erda-fabric (its errors) and picocli; never on
 * erda-server.
 */
package io.erda.client.cli;
