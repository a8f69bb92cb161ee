package io.erda.bench.compare;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import picocli.CommandLine;

/**
 * The driver end to end (real server process, real YCSB JVMs) against the test-only {@code memory} stand-in: what
 * the driver does with runs, not what the store measures.
 */
class YcsbCompareStandInTest {

    @Test
    @Timeout(60)
    void runWritesTheReportAndNamesItsFilesLast(@TempDir Path out) throws Exception {
        ByteArrayOutputStream log = new ByteArrayOutputStream();
        int status = run(log, "--protocols", "memory", "--peers", "none", "--workloads", "B", "--records", "200", "--operations", "2000",
            "--duration", "5", "--value-size", "64", "--out", out.toString());
        String printed = log.toString(StandardCharsets.UTF_8);
        assertThat(status).as(printed).isZero();
        assertThat(printed).contains("loading 200 records of 64 B into memory", "[1/1] memory: YCSB-B, 64 B values, 1 thread");
        assertThat(Files.readString(out.resolve("summary.json"))).contains("\"protocol\": \"memory\"", "\"workload\": \"B\"",
            "\"value_size\": 64");
        assertThat(Files.readString(out.resolve("results.md"))).contains("| shm | B | 64 | 1 | memory |");
        assertThat(out.resolve("raw/shm-memory-v64-B-t1.out")).exists();
        assertThat(out.resolve("raw/shm-memory-v64-load.out")).exists();
        for (String png : new String[] {"throughput.png", "latency-per-workload.png", "nvm-bytes-per-op.png", "server-cpu-per-op.png"}) {
            assertThat(Files.size(out.resolve(png))).as(png).isPositive();
        }
        String[] lines = printed.strip().split("\n");
        assertThat(lines[lines.length - 1]).contains("raw");
        assertThat(lines[lines.length - 2]).endsWith("percentiles-B.png");
    }

    @Test
    @Timeout(60)
    void serverThatFailsToStartStopsTheRunWithItsOutput(@TempDir Path out) {
        ByteArrayOutputStream log = new ByteArrayOutputStream();
        int status = run(log, "--protocols", "memory-failing", "--peers", "none", "--workloads", "C", "--records", "10", "--out", out.toString());
        assertThat(status).isEqualTo(1);
        assertThat(log.toString(StandardCharsets.UTF_8))
            .contains("stopped: server memory-memory-failing", "failed to start: exited with status 3", "memory store: told to fail");
    }

    @Test
    void unknownProtocolIsRefusedBeforeAnythingStarts(@TempDir Path out) {
        ByteArrayOutputStream log = new ByteArrayOutputStream();
        assertThat(run(log, "--protocols", "nope", "--out", out.toString())).isNotZero();
        assertThat(out.resolve("raw")).doesNotExist();
    }

    static int run(ByteArrayOutputStream log, String... args) {
        PrintStream progress = new PrintStream(log, true, StandardCharsets.UTF_8);
        CommandLine cl = new CommandLine(new YcsbCompare(progress));
        cl.setErr(new java.io.PrintWriter(progress, true));
        return cl.execute(args);
    }
}
