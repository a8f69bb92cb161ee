package io.erda.protocol.testing;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.Map;

/**
 * What the fuzz targets share (docs/ARCHITECTURE.md, Testing): the rejection property and the check of their seed
 * corpus in the source tree. In erda-protocol's test jar, which brings no other module; erda-fabric and erda-core
 * use it in test scope.
 */
public final class Fuzzing {
    private Fuzzing() {
    }

    /**
     * A rejection as [bad-input] wants it: the project's own exception (the caller catches only that type) with a
     * message that names a value (every message of these decoders carries a number: the value found, the limit, or
     * both).
     */
    public static void rejected(RuntimeException e) {
        assertThat(e.getMessage()).isNotBlank().containsPattern("[0-9]");
    }

    /**
     * Checks that the committed seed corpus of {@code target}'s fuzz test {@code method} holds exactly these inputs,
     * which the real encoders produced, besides the fuzzer's findings kept as regression inputs (files named
     * {@code regression-*}); {@code -Derda.fuzz.writeSeeds=true} rewrites the seeds first.
     */
    public static void seedCorpus(Class<?> target, String method, Map<String, byte[]> seeds) {
        Path dir = Path.of("src/test/resources", target.getPackageName().replace('.', '/'),
                target.getSimpleName() + "Inputs", method);
        try {
            if (Boolean.getBoolean("erda.fuzz.writeSeeds")) {
                Files.createDirectories(dir);
                for (var seed : seeds.entrySet()) {
                    Files.write(dir.resolve(seed.getKey()), seed.getValue());
                }
            }
            try (var files = Files.list(dir)) {
                assertThat(files.map(f -> f.getFileName().toString()).filter(name -> !name.startsWith("regression-")))
                        .containsExactlyInAnyOrderElementsOf(seeds.keySet());
            }
            for (var seed : seeds.entrySet()) {
                assertThat(Arrays.equals(Files.readAllBytes(dir.resolve(seed.getKey())), seed.getValue()))
                        .as("seed %s/%s is what the encoders produce (rewrite with -Derda.fuzz.writeSeeds=true)", dir, seed.getKey())
                        .isTrue();
            }
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
