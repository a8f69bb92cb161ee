package io.erda.bench.compare;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.erda.bench.redis.RedisBackend;
import io.erda.bench.redis.RedisServerRequired;
import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/** Redis as the default peer row of the comparison: a real redis-server next to an embedded Erda server on shm. */
class YcsbCompareRedisTest {

    @Test
    @Timeout(180)
    void redisRunsAsAPeerRowByDefault(@TempDir Path out, @TempDir Path pm) throws Exception {
        RedisServerRequired.requireInstalled();
        ByteArrayOutputStream log = new ByteArrayOutputStream();
        int status = YcsbCompareStandInTest.run(log, "--protocols", "erda", "--workloads", "A", "--records", "200",
            "--operations", "400", "--duration", "10", "--value-size", "256", "--pm-dir", pm.toString(), "--out", out.toString());
        String printed = log.toString(StandardCharsets.UTF_8);
        assertThat(status).as(printed).isZero();
        assertThat(printed).contains("[2/2] redis: YCSB-A, 256 B values, 1 thread");

        String json = Files.readString(out.resolve("summary.json"));
        Matcher redis = Pattern.compile("\\{\"fabric\": \"shm\", \"protocol\": \"redis\", \"workload\": \"A\", [^}]*\\}").matcher(json);
        assertThat(redis.find()).as(json).isTrue();
        String row = redis.group();
        assertThat(number(row, "throughput_ops")).isPositive();
        assertThat(number(row, "update_mean_us")).isPositive();
        // Every update appends its record (256 B + 10) and the command around it to the AOF.
        assertThat(number(row, "nvm_bytes_per_op")).as(row).isGreaterThan(266 / 2.0);
        assertThat(row).contains("\"server_cpu_us_per_op\": ").doesNotContain("\"server_cpu_us_per_op\": null");

        String md = Files.readString(out.resolve("results.md"));
        assertThat(md).contains("| shm | A | 256 | 1 | redis (two-sided, 1 server thread) |", "## Erda vs Redis (same run)")
            .containsPattern("\\| shm \\| A \\| 256 \\| 1 \\| 1 \\| [0-9.]+ \\| [0-9.]+ \\| [0-9.]+ \\|");
        assertThat(Files.readString(out.resolve("raw/redis-server-shm-redis-v256.conf"))).contains("appendfsync always", "save \"\"");
        assertThat(Files.size(out.resolve("throughput.png"))).isPositive();
        // No AOF, no scratch directory and no redis-server left behind.
        try (Stream<Path> left = Files.list(pm)) {
            assertThat(left.toList()).isEmpty();
        }
        assertThat(ProcessHandle.current().descendants()
            .filter(h -> h.info().command().orElse("").endsWith("redis-server")).filter(ProcessHandle::isAlive).toList()).isEmpty();
    }

    @Test
    @Timeout(60)
    void withoutRedisServerItsRowIsSkippedSayingWhy(@TempDir Path out) throws Exception {
        String saved = System.getProperty(RedisBackend.EXECUTABLE_PROPERTY);
        System.setProperty(RedisBackend.EXECUTABLE_PROPERTY, out.resolve("no-redis-server").toString());
        try {
            ByteArrayOutputStream log = new ByteArrayOutputStream();
            int status = YcsbCompareStandInTest.run(log, "--protocols", "memory", "--workloads", "C", "--records", "100",
                "--operations", "200", "--duration", "5", "--value-size", "64", "--out", out.toString());
            String printed = log.toString(StandardCharsets.UTF_8);
            assertThat(status).as(printed).isZero();
            assertThat(printed).contains("skipping redis: -Derda.redis-server=", "Debian package redis-server");
            String md = Files.readString(out.resolve("results.md"));
            assertThat(md).contains("## Not run", "- redis: ").doesNotContain("Erda vs Redis");
            assertThat(Files.readString(out.resolve("summary.json"))).doesNotContain("\"redis\"");
        } finally {
            if (saved == null) {
                System.clearProperty(RedisBackend.EXECUTABLE_PROPERTY);
            } else {
                System.setProperty(RedisBackend.EXECUTABLE_PROPERTY, saved);
            }
        }
    }

    @Test
    void peersAreRedisByDefaultNoneOrRefusedByName() {
        assertThat(PeerSystems.withPeers(List.of("erda", "redo-log"), List.of("redis"))).containsExactly("erda", "redo-log", "redis");
        assertThat(PeerSystems.withPeers(List.of("erda", "redis"), List.of("redis"))).containsExactly("erda", "redis");
        assertThat(PeerSystems.withPeers(List.of("erda"), List.of("none"))).containsExactly("erda");
        assertThatThrownBy(() -> PeerSystems.withPeers(List.of("erda"), List.of("redis", "memcached")))
            .hasMessage("--peers redis,memcached: memcached is not one of [redis] (or none alone)");
        assertThatThrownBy(() -> PeerSystems.withPeers(List.of("erda"), List.of("redis", "none")))
            .hasMessageContaining("none is not one of [redis]");
        // picocli's usage error, before anything starts
        assertThat(YcsbCompareStandInTest.run(new ByteArrayOutputStream(), "--peers", "memcached")).isEqualTo(2);
    }

    private static double number(String jsonObject, String field) {
        Matcher m = Pattern.compile("\"" + field + "\": ([-0-9.eE]+)").matcher(jsonObject);
        assertThat(m.find()).as(field + " in " + jsonObject).isTrue();
        return Double.parseDouble(m.group(1));
    }
}
