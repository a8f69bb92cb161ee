package io.erda.bench.redis;

import org.junit.jupiter.api.Assumptions;

/**
 * Tests that run a real redis-server: skipped, saying why, only where it is not installed (as the tcp partition
 * tests are without iproute2); .ci/run installs the Debian package redis-server, so CI runs them.
 */
public final class RedisServerRequired {

    private RedisServerRequired() {
    }

    public static void assumeInstalled() {
        new RedisBackend().unavailable(RedisBackend.PROTOCOL).ifPresent(why -> Assumptions.assumeTrue(false,
            "needs redis-server (Debian package redis-server; .ci/run installs it): " + why));
    }
}
