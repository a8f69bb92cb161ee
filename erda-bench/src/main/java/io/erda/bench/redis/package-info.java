/**
 * Redis as a peer of the Erda rows in the benchmarks: {@link RedisBackend} serves protocol {@code redis} through the
 * {@code io.erda.bench.backend} SPI. {@link RedisServer} runs Debian's {@code redis-server} on a free loopback port,
 * its append-only file (appendfsync always, no RDB snapshots) in the scratch directory the driver gives it, and reads
 * its CPU time from {@code /proc} and its AOF growth from the file system; {@link RedisStoreClient} is one jedis
 * connection (GET, SET, DEL).
 *
 * <p>Rules: a missing {@code redis-server} is reported by {@link RedisBackend#unavailable}, naming the package, so the
 * driver skips the row instead of failing; a server leaves no process and no file behind once closed.
 *
 * <p>Depends on {@code io.erda.bench.backend}, jedis and the JDK; not on erda-client, erda-server or the compare
 * driver.
 */
package io.erda.bench.redis;
