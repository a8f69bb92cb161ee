package io.erda.ffm.libc;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.IOException;
import java.lang.foreign.ValueLayout;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@link DeviceDax}'s refusals on any host: what is not a device-DAX device, and lengths the kernel would refuse. The
 * mapping itself runs where a device exists: {@code -Derda.test.devdax=/dev/daxN.M} (scripts/softroce-vm
 * --pmem-mode devdax), and in erda-fabric's SoftRoCE conformance test, which registers it on rxe0.
 */
class DeviceDaxTest {
    private static final long TWO_MIB = 2L << 20;

    @TempDir
    Path dir;

    @Test
    void aRegularFileIsRefusedAsNotACharacterDevice() throws IOException {
        Path file = Files.writeString(dir.resolve("not-a-device"), "x");
        assertThatThrownBy(() -> DeviceDax.map(file, TWO_MIB)).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining(file.toString()).hasMessageContaining("is not a character device")
                .hasMessageContaining("0100000");
    }

    @Test
    void aCharacterDeviceOfAnotherSubsystemIsRefusedNamingIt() {
        Path devNull = Path.of("/dev/null");
        Assumptions.assumeTrue(Files.exists(Path.of("/sys/dev/char/1:3/subsystem")), "no sysfs entry for /dev/null");
        assertThatThrownBy(() -> DeviceDax.map(devNull, TWO_MIB)).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("/dev/null (character device 1:3) is of subsystem mem, not dax");
    }

    @Test
    void aLengthThatIsNotAMultipleOfTheAlignmentIsRefusedNamingBoth() {
        var geometry = new DeviceDax.Geometry(TWO_MIB, 1L << 30);
        assertThatThrownBy(() -> DeviceDax.checkLength(Path.of("/dev/dax0.0"), TWO_MIB + 4096, geometry))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessage("mapping length 2101248 of /dev/dax0.0 is not a multiple of its alignment 2097152");
    }

    @Test
    void aLengthBeyondTheDeviceOrNotPositiveIsRefusedNamingTheLimit() {
        var geometry = new DeviceDax.Geometry(TWO_MIB, 8 * TWO_MIB);
        assertThatThrownBy(() -> DeviceDax.checkLength(Path.of("/dev/dax0.0"), 9 * TWO_MIB, geometry))
                .hasMessage("mapping length 18874368 of /dev/dax0.0 exceeds its size 16777216");
        assertThatThrownBy(() -> DeviceDax.checkLength(Path.of("/dev/dax0.0"), 0, geometry))
                .hasMessage("mapping length 0 of /dev/dax0.0 is not positive");
        DeviceDax.checkLength(Path.of("/dev/dax0.0"), 8 * TWO_MIB, geometry); // the whole device is fine
    }

    /** Where a device exists: a mapping of it holds what was stored through it, and a second mapping sees it. */
    @Test
    void storesThroughOneMappingAreSeenThroughAnother() {
        String name = System.getProperty("erda.test.devdax", System.getenv("ERDA_VM_DEVDAX"));
        Assumptions.assumeTrue(name != null && !name.isEmpty(), "no device-DAX device (ERDA_VM_DEVDAX)");
        Path device = Path.of(name);
        DeviceDax.Geometry geometry = DeviceDax.geometry(device);
        assertThat(geometry.alignment()).isPositive();
        assertThatThrownBy(() -> DeviceDax.map(device, geometry.alignment() + 4096))
                .hasMessageContaining("is not a multiple of its alignment " + geometry.alignment());
        long stamp = System.nanoTime();
        try (DeviceDax first = DeviceDax.map(device, geometry.alignment())) {
            assertThat(first.syncMapped()).as("device-DAX grants MAP_SYNC").isTrue();
            assertThat(first.segment().address() % geometry.alignment()).as("mapped at the alignment").isZero();
            first.segment().set(ValueLayout.JAVA_LONG, 64, stamp);
        }
        try (DeviceDax second = DeviceDax.map(device, geometry.alignment())) {
            assertThat(second.segment().get(ValueLayout.JAVA_LONG, 64)).isEqualTo(stamp);
        }
    }
}
