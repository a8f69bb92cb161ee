package io.erda.fabric.shm;

import static org.assertj.core.api.Assertions.assertThat;

import io.erda.fabric.DurableMirror;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * {@link ExportedRegion}'s written-out equals (PeerMemory keeps a mapping only while its region is equal in the newest
 * exports): equal when every component is, different when any one is.
 */
class ExportedRegionTest {
    private static final ExportedRegion BASE = new ExportedRegion(7, 0x1000, 4096, 3, Path.of("/dev/shm/a"), 64, 0, 2,
            Path.of("/dev/shm/m"), 128, 8);

    @Test
    void equalWhenEveryComponentIsEqual() {
        ExportedRegion same = new ExportedRegion(7, 0x1000, 4096, 3, Path.of("/dev/shm/a"), 64, 0, 2,
                Path.of("/dev/shm/m"), 128, 8);
        assertThat(same).isEqualTo(BASE).hasSameHashCodeAs(BASE);
        ExportedRegion unmirrored = new ExportedRegion(7, 0x1000, 4096, 3, Path.of("/dev/shm/a"), 64, 0, 2, null, 0, 0);
        assertThat(unmirrored).isEqualTo(new ExportedRegion(7, 0x1000, 4096, 3, Path.of("/dev/shm/a"), 64, 0, 2, null,
                0, 0));
    }

    @Test
    void differentWhenAnyOneComponentDiffers() {
        List<ExportedRegion> variants = List.of(
                new ExportedRegion(8, 0x1000, 4096, 3, Path.of("/dev/shm/a"), 64, 0, 2, Path.of("/dev/shm/m"), 128, 8),
                new ExportedRegion(7, 0x2000, 4096, 3, Path.of("/dev/shm/a"), 64, 0, 2, Path.of("/dev/shm/m"), 128, 8),
                new ExportedRegion(7, 0x1000, 8192, 3, Path.of("/dev/shm/a"), 64, 0, 2, Path.of("/dev/shm/m"), 128, 8),
                new ExportedRegion(7, 0x1000, 4096, 1, Path.of("/dev/shm/a"), 64, 0, 2, Path.of("/dev/shm/m"), 128, 8),
                new ExportedRegion(7, 0x1000, 4096, 3, Path.of("/dev/shm/b"), 64, 0, 2, Path.of("/dev/shm/m"), 128, 8),
                new ExportedRegion(7, 0x1000, 4096, 3, Path.of("/dev/shm/a"), 0, 0, 2, Path.of("/dev/shm/m"), 128, 8),
                new ExportedRegion(7, 0x1000, 4096, 3, Path.of("/dev/shm/a"), 64, 5, 2, Path.of("/dev/shm/m"), 128, 8),
                new ExportedRegion(7, 0x1000, 4096, 3, Path.of("/dev/shm/a"), 64, 0, 3, Path.of("/dev/shm/m"), 128, 8),
                new ExportedRegion(7, 0x1000, 4096, 3, Path.of("/dev/shm/a"), 64, 0, 2, null, 128, 8),
                new ExportedRegion(7, 0x1000, 4096, 3, Path.of("/dev/shm/a"), 64, 0, 2, Path.of("/dev/shm/n"), 128, 8),
                new ExportedRegion(7, 0x1000, 4096, 3, Path.of("/dev/shm/a"), 64, 0, 2, Path.of("/dev/shm/m"), 256, 8),
                new ExportedRegion(7, 0x1000, 4096, 3, Path.of("/dev/shm/a"), 64, 0, 2, Path.of("/dev/shm/m"), 128, 16),
                new ExportedRegion(7, 0x1000, 4096, 3, Path.of("/dev/shm/a"), 64, 0, 2, Path.of("/dev/shm/m"), 128, 8,
                        DurableMirror.Durability.ONCE_FENCED));
        for (ExportedRegion v : variants) {
            assertThat(v).as("%s", v).isNotEqualTo(BASE);
            assertThat(BASE).as("%s", v).isNotEqualTo(v);
        }
        assertThat(BASE).isNotEqualTo(null).isNotEqualTo("region");
    }
}
