package io.erda.ffm.rdmacm;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.erda.ffm.verbs.RdmaUnavailableException;
import io.erda.ffm.verbs.VerbsException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.net.InetSocketAddress;
import java.util.Optional;
import org.junit.jupiter.api.Test;

class RdmaCmLibraryTest {

    @Test
    void sockaddrInHoldsPortAndAddressInNetworkOrder() {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment sa = RdmaCmLibrary.sockaddrIn(arena, new InetSocketAddress("10.1.2.3", 4791));
            assertThat(sa.byteSize()).isEqualTo(16);
            assertThat(sa.get(java.lang.foreign.ValueLayout.JAVA_SHORT, 0)).isEqualTo((short) RdmaCma.AF_INET);
            assertThat(sa.asSlice(2, 6).toArray(java.lang.foreign.ValueLayout.JAVA_BYTE))
                    .containsExactly(0x12, (byte) 0xB7, 10, 1, 2, 3);
        }
    }

    @Test
    void installedLibraryLoadsAndEitherCreatesAChannelOrSaysWhyNot() {
        RdmaCmLibrary cm = RdmaCmLibrary.system();
        MemorySegment channel;
        try {
            channel = cm.createEventChannel();
        } catch (VerbsException e) {
            // No RDMA kernel support here: /dev/infiniband/rdma_cm is absent.
            assertThat(e.function()).isEqualTo("rdma_create_event_channel");
            assertThat(e.getMessage()).matches("rdma_create_event_channel failed: rc=0, .+ \\(E[A-Z]+\\)");
            return;
        }
        cm.destroyEventChannel(channel);
    }

    @Test
    void missingSymbolNamesTheLibrary() {
        assertThatThrownBy(() -> new RdmaCmLibrary(name -> Optional.empty()).createEventChannel())
                .isInstanceOf(RdmaUnavailableException.class)
                .hasMessage("symbol rdma_create_event_channel not found in librdmacm.so.1");
    }
}
