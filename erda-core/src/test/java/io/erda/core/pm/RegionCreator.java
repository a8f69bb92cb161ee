package io.erda.core.pm;

import java.nio.file.Path;

/**
 * A child process for {@link PowerFailureKillTest}: creates region files r-000000.pm, r-000001.pm, ... in the
 * directory it is given (which keeps durable images), printing each name once made, until it is killed.
 */
public final class RegionCreator {
    private RegionCreator() {
    }

    public static void main(String[] args) {
        Path dir = Path.of(args[0]);
        for (int i = 0; ; i++) {
            String name = String.format("r-%06d.pm", i);
            PmRegion.create(dir.resolve(name), PmFileHeader.KIND_LOG_REGION, 64 * 1024, new long[] {i},
                    WriteLatencyModel.OFF).close();
            System.out.println(name);
        }
    }
}
