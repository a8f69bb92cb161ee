package io.erda.fabric.verbs;

import java.net.URI;
import java.nio.file.Path;
import java.util.Map;
import java.util.OptionalInt;
import org.junit.jupiter.api.Tag;

/**
 * The whole conformance suite on the verbs provider bound to a real kernel RDMA device (rxe0 inside
 * scripts/softroce-vm) with connections set up by rdma_cm ({@code verbs.cm=rdmacm}): the kernel's RDMA CM, not the
 * software RNIC's emulation. Same properties and tag as {@link VerbsSoftRoceConformanceTest}.
 */
@Tag("softroce")
class VerbsRdmaCmSoftRoceConformanceTest extends SoftRoceConformanceTest {
    @Override
    protected URI listenUri(Path tempDir) {
        return VerbsSoftRoceConformanceTest.listen();
    }

    @Override
    protected OptionalInt liveQueuePairs() {
        return QueuePairCount.ofKernel(VerbsSoftRoceConformanceTest.device());
    }

    @Override
    protected Map<String, String> fabricProperties() {
        return Map.of(VerbsProperties.DEVICE, VerbsSoftRoceConformanceTest.device(),
                VerbsProperties.CONNECTION_MANAGER, VerbsProperties.CM_RDMACM);
    }
}
