package io.erda.bench.redis;

import org.junit.jupiter.api.Assertions;

/**
 * Tests that run a real redis-server need it installed: .ci/run installs the Debian package redis-server, and
 * without it they fail saying so (a missing package is not a reason to skip; only missing hardware is).
 */
public final class RedisServerRequired {

    private RedisServerRequired() {
    }

    public static void requireInstalled() {
        new RedisBackend().unavailable(RedisBackend.PROTOCOL).ifPresent(why -> Assertions.fail(
            "needs redis-server (Debian package redis-server; .ci/run installs it): " + why));
    }
}
