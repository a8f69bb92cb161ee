package io.erda.bench.store;

import io.erda.bench.backend.ServerProcess;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import static org.assertj.core.api.Assertions.assertThat;

/** A JVM's pauses as {@link Pauses} reads them from the log its option (or, for this JVM, VM.log) makes a JVM write. */
class PausesTest {
    @TempDir
    Path dir;

    @Test
    void aJvmsCollectionsAreReadAsPausesOnThisProcesssNanoTimeClock() throws Exception {
        Path source = Files.writeString(dir.resolve("Collect.java"),
            "class Collect { public static void main(String[] a) { for (int i = 0; i < 3; i++) System.gc(); } }");
        Path log = dir.resolve("pauses.log");
        long before = System.nanoTime();
        Process p = new ProcessBuilder(ServerProcess.javaExecutable(), Pauses.logOption(log), source.toString())
            .redirectErrorStream(true).redirectOutput(dir.resolve("out.txt").toFile()).start();
        assertThat(p.waitFor(60, TimeUnit.SECONDS)).isTrue();
        long after = System.nanoTime();

        List<Pauses.Pause> pauses = Pauses.read(log);

        assertThat(pauses).as(Files.readString(log)).filteredOn(x -> x.what().contains("Full")).hasSizeGreaterThanOrEqualTo(3);
        assertThat(pauses).allSatisfy(x -> {
            assertThat(x.startNanos()).isBetween(before, after); // CLOCK_MONOTONIC: one clock for both processes
            assertThat(x.nanos()).isPositive();
        });
    }

    @Test
    void thisJvmLogsItsOwnPausesUntilTheLogIsClosed() throws Exception {
        Path log = dir.resolve("self.log");
        long before = System.nanoTime();
        List<Pauses.Pause> logged;
        try (Pauses.SelfLog self = Pauses.logThisJvm(log)) {
            System.gc();
            System.gc();
            logged = self.pauses();
        }
        long after = System.nanoTime();
        assertThat(logged).as(Files.readString(log)).hasSizeGreaterThanOrEqualTo(2).allSatisfy(x -> {
            assertThat(x.startNanos()).isBetween(before, after);
            assertThat(x.nanos()).isPositive();
        });

        System.gc(); // after close: not logged
        assertThat(Pauses.read(log)).hasSameSizeAs(logged);
    }

    @Test
    void aZgcAllocationStallIsAPauseOfItsThread() {
        List<Pauses.Pause> found = new ArrayList<>();
        Pauses.parse("[1795516553662ms][47014945200769ns][gc       ] Allocation Stall (erda-worker-0) 1.500ms", found);
        Pauses.parse("[1795516553662ms][47014945200769ns][gc] GC(0) Major Collection (Warmup)", found);

        assertThat(found).containsExactly(new Pauses.Pause(47014945200769L - 1_500_000, 1_500_000, "allocation stall of erda-worker-0"));
        assertThat(Pauses.overlapping(found, 47014945200769L, 47014945200770L)).hasSize(1);
        assertThat(Pauses.overlapping(found, 47014945200770L, 47014945300000L)).isEmpty();
    }
}
