package io.erda.fabric.verbs;

import static org.assertj.core.api.Assertions.assertThat;

import io.erda.fabric.conformance.FabricConformanceTest;
import java.net.URI;
import java.nio.file.Path;
import java.util.Map;
import java.util.OptionalInt;
import org.junit.jupiter.api.Test;

/**
 * The whole conformance suite on the verbs provider with connections set up by rdma_cm: the provider drives
 * librdmacm's API (event channel, ids, resolve, connect/accept/reject, rdma_init_qp_attr, establish, disconnect) and
 * the software RNIC's emulated CM answers as the IB CM would.
 */
class VerbsRdmaCmFakeConformanceTest extends FabricConformanceTest {
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
        return Map.of(VerbsProperties.DEVICE, VerbsProperties.SOFT_DEVICE,
                VerbsProperties.CONNECTION_MANAGER, VerbsProperties.CM_RDMACM);
    }

    @Test
    void listenerOnPortZeroReportsTheRealPort() {
        assertThat(listener.uri().getScheme()).isEqualTo("verbs");
        assertThat(listener.uri().getPort()).isPositive();
    }
}
