package io.erda.core.pm;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatCode;

import io.erda.core.testing.ShmTempDirFactory;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.SplittableRandom;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A real process that creates PM files is killed (SIGKILL) at random moments, the directory goes through a power
 * failure, and every file it left must open: creating a file and its durable image is crash-safe at every step.
 * (Made in place, an image that a kill left half made restored a torn header over its file: "format version 0".)
 */
class PowerFailureKillTest {
    @TempDir(factory = ShmTempDirFactory.class)
    Path dir;

    @Test
    void everyFileAKilledCreatorLeftOpensAfterThePowerFailure() throws Exception {
        SplittableRandom random = new SplittableRandom(7);
        String java = ProcessHandle.current().info().command().orElseThrow();
        int opened = 0;
        for (int kill = 0; kill < 16; kill++) {
            Path round = Files.createDirectory(dir.resolve("round-" + kill));
            PowerFailure.enable(round, "test");
            Process creator = new ProcessBuilder(java, "-cp", System.getProperty("java.class.path"),
                    RegionCreator.class.getName(), round.toString()).redirectErrorStream(true).start();
            var out = new java.io.BufferedReader(new java.io.InputStreamReader(creator.getInputStream()));
            for (int made = 0; made < 20; made++) { // past the JVM's start: files are being made
                assertThat(out.readLine()).as("the creator's output").isNotNull();
            }
            Thread.sleep(random.nextInt(5, 60));
            creator.destroyForcibly(); // SIGKILL
            assertThat(creator.waitFor(30, TimeUnit.SECONDS)).isTrue();
            PowerFailure.collapse(round, kill, PowerFailure.Policy.RANDOM);
            List<Path> files;
            try (Stream<Path> listing = Files.list(round)) {
                files = listing.filter(p -> p.getFileName().toString().endsWith(".pm")).sorted().toList();
            }
            assertThat(files).hasSizeGreaterThanOrEqualTo(20);
            for (Path file : files) {
                assertThatCode(() -> PmRegion.open(file, PmFileHeader.KIND_LOG_REGION, WriteLatencyModel.OFF).close())
                        .as("%s after kill %d", file.getFileName(), kill).doesNotThrowAnyException();
                opened++;
            }
        }
        assertThat(opened).isPositive();
    }
}
