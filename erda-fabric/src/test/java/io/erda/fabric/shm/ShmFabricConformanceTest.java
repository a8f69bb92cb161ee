package io.erda.fabric.shm;

import io.erda.fabric.conformance.FabricConformanceTest;
import java.net.URI;
import java.nio.file.Path;

/** The provider-neutral suite against {@code shm:///<tempDir>/fabric}. */
class ShmFabricConformanceTest extends FabricConformanceTest {
    @Override
    protected URI listenUri(Path tempDir) {
        return ShmFabric.uriOf(tempDir.resolve("fabric"));
    }
}
