package io.erda.fabric.verbs;

import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.erda.fabric.Fabric;
import io.erda.fabric.FabricException;
import java.net.URI;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** On a host without an RNIC (this one), opening the verbs provider fails once, clearly, with no native error. */
class VerbsUnavailableTest {
    @Test
    void openingOnAHostWithoutAnRdmaDeviceSaysWhy() {
        assertThatThrownBy(() -> Fabric.open(URI.create("verbs://127.0.0.1:0")).close())
                .isExactlyInstanceOf(FabricException.class)
                .hasMessageStartingWith("verbs provider unavailable: ")
                .hasMessageMatching("(?s).*(no RDMA device|RDMA library libibverbs\\.so\\.1 not found).*");
    }

    @Test
    void rdmaCmOnAHostWithoutRdmaSaysWhyLikeTheSideChannel() {
        assertThatThrownBy(() -> Fabric.open(URI.create("verbs://127.0.0.1:0"), Map.of("verbs.cm", "rdmacm")).close())
                .isExactlyInstanceOf(FabricException.class)
                .hasMessageStartingWith("verbs provider unavailable: ");
    }

    @Test
    void unknownConnectionManagerIsRefusedByName() {
        assertThatThrownBy(() -> Fabric.open(URI.create("verbs://127.0.0.1:0"), Map.of("verbs.cm", "ibcm")))
                .isInstanceOf(FabricException.class).hasMessageContaining("verbs.cm=ibcm is not supported");
    }
}
