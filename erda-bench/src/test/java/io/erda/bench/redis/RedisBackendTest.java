package io.erda.bench.redis;

import static org.assertj.core.api.Assertions.assertThat;

import io.erda.bench.backend.ServerSettings;
import io.erda.bench.backend.StoreBackends;
import io.erda.bench.ycsb.ErdaYcsbDb;
import io.erda.bench.ycsb.RecordEncoding;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.HashMap;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
import java.util.Vector;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import redis.clients.jedis.Jedis;
import site.ycsb.ByteIterator;
import site.ycsb.Status;
import site.ycsb.StringByteIterator;

/** The redis backend and the YCSB binding over it, against a real redis-server process. */
class RedisBackendTest {

    @TempDir
    Path dir;

    private ServerSettings settings() {
        return new ServerSettings("tcp", dir.resolve("pm"), 0, "wsp", true, Duration.ofSeconds(30), dir.resolve("logs"));
    }

    @Test
    @Timeout(60)
    void bindingInsertsReadsUpdatesAndDeletesThroughRedis() throws Exception {
        RedisServerRequired.requireInstalled();
        assertThat(StoreBackends.forProtocol("redis")).isInstanceOf(RedisBackend.class);
        try (RedisServer server = (RedisServer) new RedisBackend().start("redis", settings())) {
            ErdaYcsbDb db = new ErdaYcsbDb();
            Properties p = new Properties();
            p.setProperty("erda.protocol", "redis");
            p.setProperty("erda.uri", server.uri());
            db.setProperties(p);
            db.init();
            try {
                long aofBefore = server.stats().get("aof_bytes");
                String first = "a".repeat(1024);
                assertThat(db.insert("usertable", "user1", fields(first))).isEqualTo(Status.OK);
                assertThat(read(db, "user1")).isEqualTo(first);
                String second = "b".repeat(1024);
                assertThat(db.update("usertable", "user1", fields(second))).isEqualTo(Status.OK);
                assertThat(read(db, "user1")).isEqualTo(second);
                // Both writes are in the AOF when SET returns: at least the record's bytes each.
                assertThat(server.stats().get("aof_bytes") - aofBefore).isGreaterThanOrEqualTo(2 * 1034L);
                assertThat(server.stats().get("nvm_bytes_written")).isEqualTo(server.stats().get("aof_bytes"));
                // The value is the record in the binding's encoding, as the Erda rows store it.
                try (Jedis raw = jedis(server)) {
                    assertThat(raw.get("user1".getBytes(StandardCharsets.UTF_8))).isEqualTo(RecordEncoding.encode(fields(second)));
                }
                // No key order in a hash store: scan is refused for every row alike.
                assertThat(db.scan("usertable", "user1", 10, null, new Vector<>())).isEqualTo(Status.NOT_IMPLEMENTED);
                assertThat(db.delete("usertable", "user1")).isEqualTo(Status.OK);
                assertThat(db.read("usertable", "user1", null, new HashMap<>())).isEqualTo(Status.NOT_FOUND);
                assertThat(db.delete("usertable", "user1")).as("deleting a missing key").isEqualTo(Status.OK);
            } finally {
                db.cleanup();
            }
        }
    }

    @Test
    @Timeout(60)
    void serverIsDurableOnEveryWriteAndLeavesNothingBehind() throws Exception {
        RedisServerRequired.requireInstalled();
        RedisServer server = RedisServer.start(RedisBackend.executable().orElseThrow(), settings());
        long pid = server.pid();
        Path data = server.dataDir();
        assertThat(data).startsWith(dir.resolve("pm"));
        try (server; Jedis raw = jedis(server)) {
            assertThat(raw.configGet("appendonly")).containsEntry("appendonly", "yes");
            assertThat(raw.configGet("appendfsync")).containsEntry("appendfsync", "always");
            assertThat(raw.configGet("save")).containsEntry("save", "");
            assertThat(raw.configGet("bind")).containsEntry("bind", "127.0.0.1");
            assertThat(Path.of(raw.configGet("dir").get("dir"))).isEqualTo(data.toAbsolutePath());
            // The CPU counter is the process's own: it moves while the server works.
            long cpuBefore = server.cpuNanos();
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
            byte[] value = new byte[1024];
            for (int i = 0; server.cpuNanos() == cpuBefore && System.nanoTime() < deadline; i++) {
                raw.set(("k" + (i % 100)).getBytes(StandardCharsets.UTF_8), value);
            }
            assertThat(server.cpuNanos()).isGreaterThan(cpuBefore);
        }
        assertThat(ProcessHandle.of(pid).map(ProcessHandle::isAlive).orElse(false)).as("redis-server still running").isFalse();
        assertThat(data).doesNotExist();
    }

    @Test
    @Timeout(60)
    void anAcknowledgedWriteSurvivesKillMinusNine() throws Exception {
        RedisServerRequired.requireInstalled();
        RedisServer first = RedisServer.start(RedisBackend.executable().orElseThrow(), settings());
        try (first) {
            try (Jedis raw = jedis(first)) {
                raw.set("kept", "acknowledged");
            }
            ProcessHandle.of(first.pid()).orElseThrow().destroyForcibly();
            ProcessHandle.of(first.pid()).ifPresent(h -> h.onExit().join());
            // A new server on the same directory replays the AOF.
            try (RedisServer second = RedisServer.start(RedisBackend.executable().orElseThrow(), settings());
                 Jedis raw = jedis(second)) {
                assertThat(second.dataDir()).isEqualTo(first.dataDir());
                assertThat(raw.get("kept")).isEqualTo("acknowledged");
            }
        }
    }

    @Test
    void aMissingRedisServerIsNamedWithItsPackage() {
        String saved = System.getProperty(RedisBackend.EXECUTABLE_PROPERTY);
        System.setProperty(RedisBackend.EXECUTABLE_PROPERTY, dir.resolve("no-such-redis-server").toString());
        try {
            assertThat(new RedisBackend().unavailable("redis")).hasValueSatisfying(why ->
                assertThat(why).contains("no-such-redis-server", "is not an executable file", "Debian package redis-server"));
            assertThat(RedisBackend.executable()).isEmpty();
        } finally {
            if (saved == null) {
                System.clearProperty(RedisBackend.EXECUTABLE_PROPERTY);
            } else {
                System.setProperty(RedisBackend.EXECUTABLE_PROPERTY, saved);
            }
        }
    }

    private static Map<String, ByteIterator> fields(String value) {
        Map<String, ByteIterator> f = new HashMap<>();
        f.put("field0", new StringByteIterator(value));
        return f;
    }

    private static String read(ErdaYcsbDb db, String key) {
        Map<String, ByteIterator> result = new HashMap<>();
        assertThat(db.read("usertable", key, Set.of("field0"), result)).isEqualTo(Status.OK);
        return result.get("field0").toString();
    }

    private static Jedis jedis(RedisServer server) {
        URI u = URI.create(server.uri());
        return new Jedis(u.getHost(), u.getPort());
    }
}
