package io.erda.bench.redis;

import io.erda.bench.backend.StoreClient;
import java.io.IOException;
import java.net.URI;
import redis.clients.jedis.DefaultJedisClientConfig;
import redis.clients.jedis.HostAndPort;
import redis.clients.jedis.Jedis;

/** One jedis connection to a redis-server: GET, SET and DEL of one string per key. Not thread-safe. */
final class RedisStoreClient implements StoreClient {

    static final int DEFAULT_TIMEOUT_MS = 10_000;

    private final Jedis jedis;

    private RedisStoreClient(Jedis jedis) {
        this.jedis = jedis;
    }

    /** Connects to {@code redis://HOST:PORT} and checks the server answers (PING). */
    static RedisStoreClient connect(String uri, int timeoutMs) throws IOException {
        URI u = URI.create(uri);
        if (!"redis".equals(u.getScheme()) || u.getHost() == null || u.getPort() < 0) {
            throw new IllegalArgumentException("redis URI " + uri + " is not redis://HOST:PORT");
        }
        Jedis jedis = new Jedis(new HostAndPort(u.getHost(), u.getPort()), DefaultJedisClientConfig.builder()
            .connectionTimeoutMillis(timeoutMs).socketTimeoutMillis(timeoutMs).build());
        try {
            String pong = jedis.ping();
            if (!"PONG".equals(pong)) {
                throw new IOException("redis-server at " + uri + " answered PING with " + pong);
            }
        } catch (IOException | RuntimeException e) {
            jedis.close();
            throw e;
        }
        return new RedisStoreClient(jedis);
    }

    @Override
    public byte[] get(byte[] key) {
        return jedis.get(key);
    }

    @Override
    public void put(byte[] key, byte[] value) throws IOException {
        String reply = jedis.set(key, value);
        if (!"OK".equals(reply)) {
            throw new IOException("SET answered " + reply + ", not OK");
        }
    }

    @Override
    public void delete(byte[] key) {
        jedis.del(key);
    }

    @Override
    public void close() {
        jedis.close();
    }
}
