package io.erda.remotelog;

import io.erda.core.testing.ShmTempDirFactory;
import io.erda.protocol.PmConfiguration;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * REMOTELOG over the verbs provider on the in-JVM software RNIC ({@code verbs.device=soft}): the provider's code above
 * the device is the one a real RNIC runs, FLUSH is its emulation by a READ, and Write_atomic is the device's where it
 * claims rdma-core 44, else replaced by waiting for the first FLUSH.
 */
class VerbsPowerFailuresTest {
    private static final LogLayout LAYOUT = new LogLayout(64, 2048);
    private static final Map<String, String> SOFT = Map.of("verbs.device", "soft");

    /** erda-fabric's software RNIC that claims an rdma-core without ATOMIC_WRITE. */
    private static final String WITHOUT_ATOMIC_WRITE = "io.erda.fabric.verbs.VerbsSoftDeviceTest$UnknownRdmaCore";

    @TempDir(factory = ShmTempDirFactory.class)
    Path work;

    @Test
    void correctCellsLoseNothingAndIncorrectOnesAreShownOnVerbs() throws Exception {
        try (RemoteLog log = RemoteLog.open("verbs", work, LAYOUT, SOFT)) {
            assertThat(log.operations()).contains("ATOMIC_WRITE");
            PmConfiguration dmp = PmConfiguration.parse("DMP+!DDIO+DRAM-RQWRB");
            assertThat(PowerFailures.run(log, dmp, Method.WRITE_FLUSH_ATOMIC_FLUSH, 30, 5).lost()).isZero();
            assertThat(PowerFailures.run(log, dmp, Method.WRITEIMM_SERVER_FLUSH, 30, 5).lost()).isZero();
            assertThat(PowerFailures.run(log, PmConfiguration.parse("DMP+DDIO+DRAM-RQWRB"), Method.WRITE_FLUSH, 30, 5)
                    .lost()).isPositive();
        }
    }

    @Test
    void withoutAtomicWriteTheNonPostedWriteWaitsForTheFlushInstead() throws Exception {
        Map<String, String> noAtomicWrite = Map.of("verbs.device", "soft", "verbs.soft-rnic", WITHOUT_ATOMIC_WRITE);
        try (RemoteLog log = RemoteLog.open("verbs", work, LAYOUT, noAtomicWrite)) {
            assertThat(log.appender().substitute(Method.WRITE_FLUSH_ATOMIC_FLUSH))
                    .isEqualTo(Method.WRITE_FLUSH_WAIT_TWICE);
            assertThat(PowerFailures.run(log, PmConfiguration.parse("DMP+!DDIO+PM-RQWRB"),
                    Method.WRITE_FLUSH_ATOMIC_FLUSH, 30, 6).lost()).isZero();
        }
    }
}
