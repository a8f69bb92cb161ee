package io.erda.bench.fabric;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import picocli.CommandLine;

/** fabric-bench's rounds over the real tcp provider: one warm-up, a table per round, gated by standard input. */
class FabricBenchRoundsTest {
    @TempDir
    Path dir;

    private final ByteArrayOutputStream out = new ByteArrayOutputStream();
    private final ByteArrayOutputStream progress = new ByteArrayOutputStream();

    private int run(String gateInput, String... args) {
        FabricBench bench = new FabricBench();
        bench.out = new PrintStream(out, true, StandardCharsets.UTF_8);
        bench.progress = new PrintStream(progress, true, StandardCharsets.UTF_8);
        bench.gateInput = new ByteArrayInputStream(gateInput.getBytes(StandardCharsets.UTF_8));
        CommandLine cli = new CommandLine(bench);
        cli.setErr(new java.io.PrintWriter(progress, true, StandardCharsets.UTF_8));
        return cli.execute(args);
    }

    @Test
    void gatedRoundsPrintATableEachAndTheMedianLast() {
        int rc = run("go\ngo\n", "--providers", "tcp", "--cases", "read,write", "--rounds", "2", "--gate",
                "--duration", "0.2", "--warmup", "0.1", "--dir", dir.toString());
        String table = out.toString(StandardCharsets.UTF_8);
        assertThat(rc).isZero();
        assertThat(table).contains("Round 1 of 2 (tcp, 0.2 s per case):", "Round 2 of 2 (tcp, 0.2 s per case):",
                "Median of 2 rounds:");
        assertThat(table.lines().filter(l -> l.startsWith("| tcp | READ 64 B |")).count()).isEqualTo(3);
        assertThat(table.lines().filter(l -> l.startsWith("| tcp | WRITE 64 B |")).count()).isEqualTo(3);
        assertThat(table).doesNotContain("READ 4 KiB");
        assertThat(progress.toString(StandardCharsets.UTF_8).lines())
                .containsSubsequence("warmed up (tcp): waiting for a line on standard input per round", "round 1 of 2 measured", "round 2 of 2 measured");
    }

    @Test
    void aGateLineNamingCasesMeasuresOnlyThoseAndTheMedianTakesEachCaseFromItsOwnRounds() {
        int rc = run("read\nread\nwrite\n", "--providers", "tcp", "--cases", "read,write", "--rounds", "3", "--gate",
                "--duration", "0.2", "--warmup", "0.1", "--dir", dir.toString());
        String table = out.toString(StandardCharsets.UTF_8);
        assertThat(rc).isZero();
        String[] rounds = table.split("Round \\d of 3|Median of 3 rounds:");
        assertThat(rounds).hasSize(5); // before the first round, three rounds, the medians
        assertThat(rounds[1]).contains("| tcp | READ 64 B |").doesNotContain("WRITE 64 B");
        assertThat(rounds[2]).contains("| tcp | READ 64 B |").doesNotContain("WRITE 64 B");
        assertThat(rounds[3]).contains("| tcp | WRITE 64 B |").doesNotContain("READ 64 B");
        assertThat(rounds[4]).contains("| tcp | READ 64 B |", "| tcp | WRITE 64 B |");
    }

    @Test
    void theEndOfTheGateInputEndsTheRounds() {
        int rc = run("go\n", "--providers", "tcp", "--cases", "read", "--rounds", "3", "--gate",
                "--duration", "0.1", "--warmup", "0.1", "--dir", dir.toString());
        assertThat(rc).isZero();
        assertThat(progress.toString(StandardCharsets.UTF_8).lines().filter(l -> l.endsWith("measured")).toList())
                .isEqualTo(List.of("round 1 of 3 measured"));
        assertThat(out.toString(StandardCharsets.UTF_8)).doesNotContain("Round 2").doesNotContain("Median");
    }

    @Test
    void anUnknownCaseIsRefusedByName() {
        int rc = run("", "--providers", "tcp", "--cases", "read,reed", "--dir", dir.toString());
        assertThat(rc).isEqualTo(2);
        assertThat(progress.toString(StandardCharsets.UTF_8))
                .contains("--cases: unknown case 'reed', known: read, write, write-read, read-4k, ping-pong, read-x2, read-x4");
    }

    @Test
    void roundsOutsideTheirRangeAreRefused() {
        assertThat(run("", "--providers", "tcp", "--rounds", "0", "--dir", dir.toString())).isEqualTo(2);
        assertThat(progress.toString(StandardCharsets.UTF_8)).contains("--rounds 0 outside 1..1000");
    }
}
