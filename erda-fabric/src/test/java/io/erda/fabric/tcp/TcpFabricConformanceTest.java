package io.erda.fabric.tcp;

import io.erda.fabric.conformance.FabricConformanceTest;
import java.net.URI;
import java.nio.file.Path;

/** The conformance suite on the tcp software RNIC over loopback. */
class TcpFabricConformanceTest extends FabricConformanceTest {
    @Override
    protected URI listenUri(Path tempDir) {
        return URI.create("tcp://127.0.0.1:0");
    }
}
