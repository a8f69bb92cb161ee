package io.erda.fabric.verbs;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.erda.fabric.FabricException;
import java.util.Map;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.parallel.ResourceLock;
import org.junit.jupiter.api.parallel.Resources;

/** Properties of a fabric opened from a URI alone come from the JVM's system properties; the map's win. */
@ResourceLock(Resources.SYSTEM_PROPERTIES)
class VerbsPropertiesTest {
    @AfterEach
    void clear() {
        System.clearProperty(VerbsProperties.DEVICE);
        System.clearProperty(VerbsProperties.CONNECTION_MANAGER);
        System.clearProperty(VerbsProperties.POLL_SPIN_NANOS);
        System.clearProperty(VerbsProperties.POLL_SPIN_POLLS);
    }

    @Test
    void systemPropertiesFillWhatTheMapLeavesOut() {
        System.setProperty(VerbsProperties.DEVICE, "rxe0");
        System.setProperty(VerbsProperties.CONNECTION_MANAGER, VerbsProperties.CM_RDMACM);
        VerbsProperties p = VerbsProperties.parseWithSystemDefaults(Map.of());
        assertThat(p.device()).isEqualTo("rxe0");
        assertThat(p.rdmaCm()).isTrue();
    }

    @Test
    void theMapWinsOverASystemProperty() {
        System.setProperty(VerbsProperties.DEVICE, "rxe0");
        VerbsProperties p = VerbsProperties.parseWithSystemDefaults(Map.of(VerbsProperties.DEVICE, "mlx5_1"));
        assertThat(p.device()).isEqualTo("mlx5_1");
        assertThat(p.rdmaCm()).isFalse();
    }

    @Test
    void aBadSystemPropertyIsRefusedByName() {
        System.setProperty(VerbsProperties.CONNECTION_MANAGER, "ibcm");
        assertThatThrownBy(() -> VerbsProperties.parseWithSystemDefaults(Map.of()))
                .isInstanceOf(FabricException.class).hasMessageStartingWith("verbs.cm=ibcm is not supported");
    }

    @Test
    void pollSpinIsReadAndBoundedNamingTheValueAndTheLimit() {
        assertThat(VerbsProperties.parse(Map.of()).pollSpinNanos()).isZero();
        assertThat(VerbsProperties.parse(Map.of(VerbsProperties.POLL_SPIN_NANOS, "20000")).pollSpinNanos())
                .isEqualTo(20_000);
        System.setProperty(VerbsProperties.POLL_SPIN_NANOS, "5000");
        assertThat(VerbsProperties.parseWithSystemDefaults(Map.of()).pollSpinNanos()).isEqualTo(5_000);
        assertThatThrownBy(() -> VerbsProperties.parse(Map.of(VerbsProperties.POLL_SPIN_NANOS, "20000000")))
                .hasMessageContaining("verbs.poll-spin-ns=20000000").hasMessageContaining("0..10000000");
        assertThatThrownBy(() -> VerbsProperties.parse(Map.of(VerbsProperties.POLL_SPIN_NANOS, "fast")))
                .hasMessageContaining("verbs.poll-spin-ns=fast");
    }

    @Test
    void pollSpinPollsDefaultsToACountAndIsBoundedNamingTheValueAndTheLimit() {
        assertThat(VerbsProperties.parse(Map.of()).pollSpinPolls()).isEqualTo(VerbsProperties.DEFAULT_POLL_SPIN_POLLS);
        assertThat(VerbsProperties.parse(Map.of(VerbsProperties.POLL_SPIN_POLLS, "0")).pollSpinPolls()).isZero();
        System.setProperty(VerbsProperties.POLL_SPIN_POLLS, "64");
        assertThat(VerbsProperties.parseWithSystemDefaults(Map.of()).pollSpinPolls()).isEqualTo(64);
        assertThatThrownBy(() -> VerbsProperties.parse(Map.of(VerbsProperties.POLL_SPIN_POLLS, "-1")))
                .hasMessageContaining("verbs.poll-spin-polls=-1").hasMessageContaining("0..1000000");
        assertThatThrownBy(() -> VerbsProperties.parse(Map.of(VerbsProperties.POLL_SPIN_POLLS, "many")))
                .hasMessageContaining("verbs.poll-spin-polls=many");
    }
}
