package io.erda.bench.compare;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** results.md's acceptance section: each target met or not by the figures of one run, and only where it applies. */
class AcceptanceTest {
    private static RunRecord run(String protocol, String workload, double ops, Double updateMeanUs, int threads,
                                 int clients, Long targetOps) {
        return new RunRecord("shm", protocol, workload, 1024, threads, ops, null, null, updateMeanUs, null, null,
            workload.equals("C") ? 0.0 : null, null, clients, targetOps, Map.of());
    }

    private static RunRecord run(String protocol, String workload, double ops, Double updateMeanUs) {
        return run(protocol, workload, ops, updateMeanUs, 1, 1, null);
    }

    @Test
    void eachTargetIsMetOrNotByTheRunsFigures() {
        List<String> lines = ComparisonTable.acceptance(List.of(
            run("erda", "update-only", 90_000, 9.5), run("redo-log", "update-only", 60_000, 15.0),
            run("erda", "B", 200_000, 15.5), run("redo-log", "B", 150_000, 17.0),
            run("erda", "C", 700_000, null), run("redo-log", "C", 200_000, null))).lines().toList();
        assertThat(lines).containsExactly(
            "- met YCSB-update-only throughput ≥ 1.0× Redo Logging (1 thread): measured 1.50",
            "- met YCSB-update-only update mean ≤ 10 µs (1 thread): measured 9.50",
            "- NOT met YCSB-B throughput ≥ 1.4× Redo Logging (1 thread): measured 1.33",
            "- NOT met YCSB-B update mean ≤ 15 µs (1 thread): measured 15.5",
            "- met YCSB-C throughput ≥ 1.5× Redo Logging (1 thread): measured 3.50",
            "- met server CPU per GET is 0 µs (1 thread): measured 0");
    }

    @Test
    void theOneSidedPutsTargetsAreCheckedAgainstRedoLoggingAndErdasReserveMode() {
        RunRecord oneSided = new RunRecord("shm", "erda-one-sided", "update-only", 1024, 1, 300_000, null, null, 2.5,
            null, null, 0.05, null, 1, null, Map.of());
        List<String> lines = ComparisonTable.acceptance(List.of(oneSided, run("erda", "update-only", 100_000, 9.5),
            run("redo-log", "update-only", 120_000, 8.0))).lines().filter(l -> l.contains("one-sided")).toList();
        assertThat(lines).containsExactly(
            "- NOT met one-sided PUT: YCSB-update-only throughput ≥ 3× Redo Logging (1 thread): measured 2.50",
            "- met one-sided PUT: YCSB-update-only throughput ≥ 2× Erda's reserve mode (1 thread): measured 3.00",
            "- met one-sided PUT: server CPU per update ≤ 0.1 µs (1 thread): measured 0.0500",
            "- met one-sided PUT: YCSB-update-only update mean ≤ 3 µs (1 thread): measured 2.50");
    }

    /** A run whose settings add costs the one-sided lines were not set for says which, and how they are judged. */
    @Test
    void aOneSidedRunWithThePmModelOrFourKibPagesSaysHowTheLinesAreJudged() {
        List<RunRecord> runs = List.of(new RunRecord("shm", "erda-one-sided", "update-only", 1024, 1, 300_000, null, null,
            2.5, null, null, 0.05, null, 1, null, Map.of()));
        assertThat(YcsbCompare.oneSidedConditions(runs, 150, "off")).contains("the PM write model (150 ns per written"
            + " line, to every protocol) and page allocation on the log's first writes (4 KiB pages)",
            "--huge-pages thp --pm-dir DIR (a tmpfs mounted huge=within_size) --pm-write-latency-ns 0");
        assertThat(YcsbCompare.oneSidedConditions(runs, 0, "off")).contains("this run adds page allocation on the log's"
            + " first writes (4 KiB pages).");
        assertThat(YcsbCompare.oneSidedConditions(runs, 150, "thp")).contains("this run adds the PM write model (150 ns"
            + " per written line, to every protocol).");
        assertThat(YcsbCompare.oneSidedConditions(runs, 0, "thp")).isEmpty();
        String report = ComparisonTable.markdown(runs, "t", YcsbCompare.oneSidedConditions(runs, 150, "off"));
        assertThat(report.substring(report.indexOf("## Acceptance"))).as("the note right under the lines")
            .containsSubsequence("one-sided PUT: server CPU per update", "\nThe one-sided PUT's lines");
        assertThat(YcsbCompare.oneSidedConditions(List.of(run("erda", "update-only", 100_000, 9.5)), 150, "off")).isEmpty();
    }

    /**
     * Where the server says what its cleaner spent, the server-CPU target is the update's path (block grants in it):
     * 0.45 µs per update of which the cleaner's copies and zeroing took 0.40 meets it and shows both; 0.15 of which the
     * cleaner took 0.02 does not.
     */
    @Test
    void theOneSidedServerCpuTargetLeavesTheCleanerOutAndShowsIt() {
        RunRecord cleaning = new RunRecord("shm", "erda-one-sided", "update-only", 1024, 1, 300_000, null, null, 2.5,
            null, 1100.0, 0.45, null, 1, null, Map.of(), 40.0, 0.40);
        RunRecord heavy = new RunRecord("shm", "erda-one-sided", "update-only", 1024, 2, 300_000, null, null, 2.5,
            null, 1100.0, 0.15, null, 1, null, Map.of(), 40.0, 0.02);
        List<String> lines = ComparisonTable.acceptance(List.of(cleaning, heavy)).lines()
            .filter(l -> l.contains("server CPU")).toList();
        assertThat(lines).containsExactly(
            "- met one-sided PUT: server CPU per update ≤ 0.1 µs (1 thread), block grants included (the cleaner's CPU"
                + " left out; with it 0.450): measured 0.0500",
            "- NOT met one-sided PUT: server CPU per update ≤ 0.1 µs (2 threads), block grants included (the cleaner's"
                + " CPU left out; with it 0.150): measured 0.130");
    }

    @Test
    void updateMeanTargetsAreForOneClosedLoopThreadOnly() {
        String acceptance = ComparisonTable.acceptance(List.of(
            run("erda", "update-only", 200_000, 20.0, 4, 1, null), run("erda", "B", 100_000, 30.0, 1, 2, null),
            run("erda", "update-only", 20_000, 25.0, 1, 1, 20_000L)));
        assertThat(acceptance).doesNotContain("update mean");
        assertThat(ComparisonTable.acceptance(List.of(run("erda", "update-only", 90_000, 10.0))))
            .isEqualTo("- met YCSB-update-only update mean ≤ 10 µs (1 thread): measured 10.0\n");
    }
}
