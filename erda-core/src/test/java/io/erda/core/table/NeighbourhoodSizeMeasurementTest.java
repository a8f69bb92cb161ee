package io.erda.core.table;

import static org.assertj.core.api.Assertions.assertThat;

import io.erda.core.pm.WriteLatencyModel;
import io.erda.core.testing.ShmTempDirFactory;
import io.erda.protocol.memory.AtomicWord;
import io.erda.protocol.memory.TableGeometry;
import java.nio.file.Path;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Measures, for several neighbourhood sizes H, the load factor a table reaches before the first
 * insert fails (entries are 16 bytes, so a window is H*16 bytes). Prints the numbers quoted in
 * {@link HopscotchTable}'s Javadoc; asserts only what must hold whatever the machine.
 */
class NeighbourhoodSizeMeasurementTest {
    private static final long CAPACITY = 1 << 16;
    private static final int SEEDS = 3;

    @TempDir(factory = ShmTempDirFactory.class)
    Path dir;

    @Test
    void largerNeighbourhoodsReachHigherLoadBeforeTheFirstFailedInsert() {
        double previous = 0;
        StringBuilder report = new StringBuilder("hopscotch max load before first failed insert, capacity " + CAPACITY + ":");
        for (int h : new int[] {8, 16, 32, 64}) {
            double sum = 0;
            for (int seed = 0; seed < SEEDS; seed++) {
                sum += maxLoad(h, seed);
            }
            double mean = sum / SEEDS;
            report.append(String.format(" H=%d (window %d B): %.3f;", h, h * 16, mean));
            assertThat(mean).as("H=%d", h).isGreaterThanOrEqualTo(previous);
            previous = mean;
        }
        System.out.println(report);
    }

    private double maxLoad(int neighbourhood, int seed) {
        Path file = dir.resolve("h" + neighbourhood + "-" + seed + ".pm");
        SplittableRandom random = new SplittableRandom(seed);
        try (HopscotchTable table = HopscotchTable.create(file, TableGeometry.forCapacity(CAPACITY, neighbourhood), WriteLatencyModel.OFF)) {
            try {
                for (int i = 1; ; i++) {
                    table.insert(random.nextLong(), 0, AtomicWord.initial(i));
                }
            } catch (TableFullException expected) {
                return (double) table.count() / CAPACITY;
            }
        }
    }
}
