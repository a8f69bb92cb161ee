package io.erda.server;

import io.erda.core.testing.ShmTempDirFactory;

import java.nio.file.Path;
import java.time.Duration;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.io.TempDir;

/** Base of the tests that talk to a running server over a fabric (TestStores#schemes): starts one per test, closes it after. */
abstract class RunningServer {
    @TempDir(factory = ShmTempDirFactory.class)
    Path dir;

    RequestServer server;

    /** Starts a small server with a 30 s lease and connects one Erda client to it. */
    RawClient start(String scheme) {
        server = RequestServer.start(TestStores.config(dir, scheme, Duration.ofSeconds(30)));
        return RawClient.connect(server.uri());
    }

    @AfterEach
    void stopServer() {
        if (server != null) {
            server.close();
        }
    }
}
