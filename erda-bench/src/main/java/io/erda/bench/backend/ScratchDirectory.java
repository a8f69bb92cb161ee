package io.erda.bench.backend;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Comparator;
import java.util.stream.Stream;

/** The benchmarks' throw-away directories (PM stores, fabric homes, reports being rewritten). */
public final class ScratchDirectory {
    private ScratchDirectory() {
    }

    /** Deletes {@code root} and everything below it; nothing to do if it does not exist. */
    public static void delete(Path root) throws IOException {
        if (!Files.exists(root)) {
            return;
        }
        try (Stream<Path> walk = Files.walk(root)) {
            walk.sorted(Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
        }
    }
}
