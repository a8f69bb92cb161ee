package io.erda.fabric.verbs;

import static org.assertj.core.api.Assertions.assertThat;

import io.erda.fabric.conformance.FabricConformanceTest;
import java.net.URI;
import java.nio.file.Path;
import java.util.Map;
import java.util.OptionalInt;
import org.junit.jupiter.api.Test;

/**
 * The whole conformance suite on the verbs provider over the software RNIC: every work request the provider builds
 * is an {@code ibv_send_wr} in native memory, posted through the ibv_context ops table into an upcall that decodes
 * and executes it; every completion comes back as an {@code ibv_wc} through poll_cq.
 */
class VerbsFakeConformanceTest extends FabricConformanceTest {
    @Override
    protected URI listenUri(Path tempDir) {
        return URI.create("verbs://127.0.0.1:0");
    }

    @Override
    protected OptionalInt liveQueuePairs() {
        return QueuePairCount.ofFabrics(target, initiator);
    }

    @Override
    protected Map<String, String> fabricProperties() {
        return Map.of(VerbsProperties.DEVICE, VerbsProperties.SOFT_DEVICE);
    }

    @Test
    void listenerOnPortZeroReportsTheRealPort() {
        assertThat(listener.uri().getScheme()).isEqualTo("verbs");
        assertThat(listener.uri().getPort()).isPositive();
    }
}
