package io.erda.ffm.verbs;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.lang.foreign.SymbolLookup;
import java.util.List;
import java.util.Optional;
import org.junit.jupiter.api.Test;

class DeviceDiscoveryTest {

    @Test
    void systemLibraryListsDevicesOrFailsWithOneClearMessage() {
        VerbsLibrary verbs = VerbsLibrary.system();
        List<String> names;
        try {
            names = verbs.deviceNames();
        } catch (RdmaUnavailableException e) {
            // This host (no InfiniBand in the kernel): "... failed: Function not implemented (ENOSYS)".
            assertThat(e.getMessage()).matches(
                    "no RDMA device: ibv_get_device_list (failed: [^()]+ \\(E[A-Z]+\\)|found 0 devices)");
            assertThat(e.getCause()).isNull();
            return;
        }
        assertThat(names).isNotEmpty().allSatisfy(name -> assertThat(name).isNotBlank());
    }

    @Test
    void withoutInfinibandSupportTheKernelSaysEnosys() {
        boolean rdmaKernel = java.nio.file.Files.isDirectory(java.nio.file.Path.of("/sys/class/infiniband"));
        org.junit.jupiter.api.Assumptions.assumeFalse(rdmaKernel, "host has RDMA support");
        assertThatThrownBy(() -> VerbsLibrary.system().deviceNames())
                .isInstanceOf(RdmaUnavailableException.class)
                .hasMessage("no RDMA device: ibv_get_device_list failed: Function not implemented (ENOSYS)");
    }

    @Test
    void installedLibraryIsRdmaCore44OrNewerAndFlushFollowsItsVersion() {
        NativeCapabilities caps = VerbsLibrary.system().capabilities();
        assertThat(caps.rdmaCoreVersion()).isGreaterThanOrEqualTo(44);
        assertThat(caps.nativeAtomicWrite()).isTrue();
        assertThat(caps.nativeFlush()).isEqualTo(caps.rdmaCoreVersion() >= 45 && Verbs.ERDA_HAVE_WR_FLUSH == 1);
    }

    @Test
    void missingSymbolIsAnRdmaUnavailableExceptionNotAnUnsatisfiedLink() {
        VerbsLibrary empty = new VerbsLibrary(name -> Optional.empty());
        assertThatThrownBy(empty::deviceNames)
                .isInstanceOf(RdmaUnavailableException.class)
                .hasMessage("symbol ibv_get_device_list not found in libibverbs.so.1");
    }

    @Test
    void missingLibraryIsOneClearError() {
        assertThatThrownBy(() -> NativeLibrary.openSystemLibrary("libibverbs-erda-absent.so.1", "libibverbs1"))
                .isInstanceOf(RdmaUnavailableException.class)
                .hasMessageStartingWith("RDMA library libibverbs-erda-absent.so.1 not found (install libibverbs1)");
    }

    @Test
    void unknownLookupClaimsNoNativeExtendedOperations() {
        SymbolLookup none = name -> Optional.empty();
        assertThat(new VerbsLibrary(none).supportsNativeFlush()).isFalse();
        assertThat(new VerbsLibrary(none).capabilities().nativeAtomicWrite()).isFalse();
    }

    @Test
    void onlyTheSystemLibraryCallsItsDataPathAsCriticalDowncalls() {
        // a fake's poll_cq and post_send are upcall stubs, which a critical downcall must never reach
        assertThat(new VerbsLibrary(name -> Optional.empty()).criticalDataPath()).isFalse();
        assertThat(new VerbsLibrary(name -> Optional.empty(), 44).criticalDataPath()).isFalse();
        assertThat(VerbsLibrary.system().criticalDataPath()).isTrue();
    }
}
