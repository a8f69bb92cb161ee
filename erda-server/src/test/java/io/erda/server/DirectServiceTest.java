package io.erda.server;

import io.erda.core.testing.ShmTempDirFactory;
import java.nio.file.Path;
import java.time.Duration;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import static io.erda.server.TestStores.bytes;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * A request that arrives while every worker is parked is served on the tcp provider's thread that received it
 * (RequestServer.serveDirectly): no worker wake-up on its path. shm has no such thread; its requests go to the
 * workers.
 */
class DirectServiceTest {
    private static final int REQUESTS = 10;

    @TempDir(factory = ShmTempDirFactory.class)
    Path dir;

    private static long servedDirectly(RequestServer server) {
        return Long.parseLong(server.stats().replaceAll("(?s).*requests_served_directly=(\\d+).*", "$1"));
    }

    /** PUTs and GETs 20 ms apart (the worker parks after 0.2 ms); returns how many were served directly. */
    private long spacedRequests(String scheme) throws InterruptedException {
        try (RequestServer server = RequestServer.start(TestStores.config(dir.resolve(scheme), scheme, Duration.ofSeconds(5)));
             RawClient client = RawClient.connect(server.uri())) {
            client.hello();
            long before = servedDirectly(server);
            for (int i = 0; i < REQUESTS / 2; i++) {
                Thread.sleep(20);
                client.putAndWrite(bytes("key-" + i), bytes("value-" + i));
                Thread.sleep(20);
                assertThat(client.getString(bytes("key-" + i))).isEqualTo("value-" + i);
            }
            long served = servedDirectly(server) - before;
            assertThat(server.stats()).as("the requests were served").contains("puts=" + REQUESTS / 2 + "\n")
                    .contains("gets_two_sided=" + REQUESTS / 2 + "\n").contains("errors=0\n");
            return served;
        }
    }

    @Test
    void overTcpRequestsToSleepingWorkersAreServedOnTheProviderThread() throws InterruptedException {
        // all of them, but for one the worker met while it came back from its idle wait (0.2 ms in 500 ms)
        assertThat(spacedRequests("tcp")).isBetween((long) REQUESTS - 1, (long) REQUESTS);
    }

    @Test
    void overShmTheWorkersServeEveryRequest() throws InterruptedException {
        assertThat(spacedRequests("shm")).isZero();
    }
}
