package io.erda.fabric.verbs;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.erda.fabric.Fabric;
import io.erda.fabric.FabricException;
import io.erda.ffm.verbs.SoftwareRnic;
import java.net.URI;
import java.util.Map;
import java.util.ServiceLoader;
import org.junit.jupiter.api.Test;

/**
 * {@code verbs.device=soft} opens the software RNIC that ServiceLoader finds (erda-soft-rnic, a test dependency) or
 * the one {@code verbs.soft-rnic} names; a class path without one gets an error that says what to add.
 */
class VerbsSoftDeviceTest {
    private static final URI ANY = URI.create("verbs://127.0.0.1:0");

    /** The registered software RNIC, claiming a library without the extended send API (rdma-core unknown). */
    public static final class UnknownRdmaCore implements SoftwareRnic {
        private final SoftwareRnic registered = ServiceLoader.load(SoftwareRnic.class).findFirst().orElseThrow();

        @Override
        public Device newDevice() {
            return registered.newDevice();
        }

        @Override
        public int rdmaCoreVersion() {
            return 0;
        }
    }

    private static Map<String, String> soft(String softRnic) {
        return Map.of(VerbsProperties.DEVICE, VerbsProperties.SOFT_DEVICE, VerbsProperties.SOFT_RNIC, softRnic);
    }

    @Test
    void withoutASoftwareRnicOnTheClassPathSoftIsRefusedNamingTheArtifactToAdd() {
        VerbsProperties soft = VerbsProperties.parse(Map.of(VerbsProperties.DEVICE, VerbsProperties.SOFT_DEVICE));
        ClassLoader bootstrapOnly = new ClassLoader(null) { };
        assertThatThrownBy(() -> VerbsFabric.softwareRnic(soft, bootstrapOnly))
                .isExactlyInstanceOf(FabricException.class)
                .hasMessage("verbs.device=soft needs the in-JVM software RNIC, and no io.erda.ffm.verbs.SoftwareRnic is"
                        + " on the class path: add io.erda:erda-soft-rnic (test scope) to the dependencies");
    }

    @Test
    void theRegisteredSoftwareRnicStandsForItsRdmaCoreRelease() {
        try (Fabric fabric = Fabric.open(ANY, Map.of(VerbsProperties.DEVICE, VerbsProperties.SOFT_DEVICE))) {
            assertThat(fabric.capabilities().atomicWrite()).isTrue();
            assertThat(fabric.capabilities().device()).contains("rdma-core 44");
        }
    }

    @Test
    void aNamedSoftwareRnicIsUsedInsteadOfTheRegisteredOne() {
        try (Fabric fabric = Fabric.open(ANY, soft(UnknownRdmaCore.class.getName()))) {
            assertThat(fabric.capabilities().atomicWrite()).isFalse();
            assertThat(fabric.capabilities().device()).contains("rdma-core unknown");
        }
    }

    @Test
    void aNamedClassThatIsNoSoftwareRnicIsRefusedByName() {
        assertThatThrownBy(() -> Fabric.open(ANY, soft("java.lang.String")))
                .isExactlyInstanceOf(FabricException.class)
                .hasMessage("verbs.soft-rnic=java.lang.String does not implement io.erda.ffm.verbs.SoftwareRnic");
    }

    @Test
    void aNamedClassThatIsNotOnTheClassPathIsRefusedByName() {
        assertThatThrownBy(() -> Fabric.open(ANY, soft("io.erda.NoSuchRnic")))
                .isExactlyInstanceOf(FabricException.class)
                .hasMessage("verbs.soft-rnic=io.erda.NoSuchRnic: no such class on the class path"
                        + " (is io.erda:erda-soft-rnic a dependency?)");
    }
}
