package io.erda.fabric.verbs;

import java.net.URI;
import java.nio.file.Path;
import java.util.Map;
import java.util.OptionalInt;
import org.junit.jupiter.api.Tag;

/**
 * The whole conformance suite on the verbs provider bound to a real kernel RDMA device: rxe0 (SoftRoCE) inside
 * scripts/softroce-vm, connections set up over the default TCP side channel. Tagged softroce: the normal Surefire
 * run excludes it (no RDMA device there); scripts/test-softroce runs it in the VM.
 *
 * <p>System properties: {@code erda.softroce.device} (default rxe0), {@code erda.softroce.address} (default
 * 192.0.2.1, veth0's address in the VM, the netdev rxe0 sits on).
 */
@Tag("softroce")
class VerbsSoftRoceConformanceTest extends SoftRoceConformanceTest {
    static String device() {
        return System.getProperty("erda.softroce.device", "rxe0");
    }

    static URI listen() {
        return URI.create("verbs://" + System.getProperty("erda.softroce.address", "192.0.2.1") + ":0");
    }

    @Override
    protected URI listenUri(Path tempDir) {
        return listen();
    }

    @Override
    protected OptionalInt liveQueuePairs() {
        return QueuePairCount.ofKernel(device());
    }

    @Override
    protected Map<String, String> fabricProperties() {
        return Map.of(VerbsProperties.DEVICE, device());
    }
}
