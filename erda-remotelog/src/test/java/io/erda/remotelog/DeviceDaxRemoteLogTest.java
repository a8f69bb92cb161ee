package io.erda.remotelog;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.erda.core.testing.ShmTempDirFactory;
import io.erda.protocol.PmConfiguration;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * REMOTELOG with its log on a device-DAX device ({@code RemoteLog.open(..., logDevice)}): refused by name where it
 * cannot be, on any host; and where a device exists (erda.test.devdax, scripts/softroce-vm --pmem-mode devdax, whose
 * rxe0 registers it), a correct cell loses nothing and an incorrect one is shown losing appends over verbs.
 */
class DeviceDaxRemoteLogTest {
    private static final LogLayout LAYOUT = new LogLayout(64, 2048);

    @TempDir(factory = ShmTempDirFactory.class)
    Path work;

    @Test
    void aLogDeviceOnShmIsRefusedNamingTheDeviceAndWhy() {
        Path device = Path.of("/dev/dax0.0");
        assertThatThrownBy(() -> RemoteLog.open("shm", work, LAYOUT, Map.of(), device))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("/dev/dax0.0")
                .hasMessageContaining("shm maps the log in the peer by its file");
    }

    @Test
    void aLogDeviceThatIsAFileIsRefusedAsNotADevice() throws Exception {
        Path file = Files.writeString(work.resolve("not-a-device"), "x");
        assertThatThrownBy(() -> RemoteLog.open("tcp", work, LAYOUT, Map.of(), file))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining(file + " is not a character device");
    }

    @Test
    void onADeviceDaxLogOverVerbsCorrectCellsLoseNothingAndIncorrectOnesAreShown() throws Exception {
        String name = System.getProperty("erda.test.devdax");
        Assumptions.assumeTrue(name != null && !name.isEmpty(),
                "no device-DAX device (scripts/softroce-vm --pmem-mode devdax sets erda.test.devdax)");
        Map<String, String> rxe = Map.of("verbs.device", System.getProperty("erda.softroce.device", "rxe0"));
        try (RemoteLog log = RemoteLog.open("verbs", work, LAYOUT, rxe, Path.of(name))) {
            assertThat(log.logMapping()).contains(name).contains("device-DAX").contains("MAP_SYNC")
                    .contains("a write-back is a fence only");
            PmConfiguration mhp = PmConfiguration.parse("MHP+DDIO+DRAM-RQWRB");
            PowerFailures.Outcome correct = PowerFailures.run(log, mhp, Method.WRITE_FLUSH, 10, 1);
            assertThat(correct.acknowledged()).isPositive();
            assertThat(correct.lost()).as("write-flush in MHP").isZero();
            assertThat(PowerFailures.run(log, mhp, Method.WRITE, 10, 1).lost()).as("write in MHP").isPositive();
        }
    }
}
