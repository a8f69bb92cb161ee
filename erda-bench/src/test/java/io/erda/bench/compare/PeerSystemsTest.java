package io.erda.bench.compare;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** results.md's "Erda vs Redis" table: which runs it pairs and what each row says about them. */
class PeerSystemsTest {
    private static RunRecord run(String protocol, int clients, int threads, double ops) {
        return new RunRecord("shm", protocol, "A", 1024, threads, ops, 5.0, null, 7.0, null, null, null, null, clients,
            null, Map.of());
    }

    @Test
    void eachRowSaysItsClientProcessesAndPairsOnlyRunsOfTheSameCount() {
        // --full's process sweep: the one-process runs come first, so pairing on threads alone would put Redis's
        // one-process figure next to Erda's four
        String table = PeerSystems.markdown(List.of(
            run("erda", 1, 1, 100_000), run("erda", 4, 1, 400_000),
            run("redis", 1, 1, 50_000), run("redis", 4, 1, 80_000)));
        assertThat(table).contains("| fabric | workload | value B | client processes | threads each | Erda ops/s |");
        List<String> rows = table.lines().filter(l -> l.startsWith("| shm |")).toList();
        assertThat(rows).containsExactly(
            "| shm | A | 1024 | 1 | 1 | 100000 | 50000 | 2.00 | 5.00 / 5.00 | 7.00 / 7.00 | — | — |",
            "| shm | A | 1024 | 4 | 1 | 400000 | 80000 | 5.00 | 5.00 / 5.00 | 7.00 / 7.00 | — | — |");
    }

    @Test
    void anErdaRunWithoutARedisRunOfItsClientProcessesHasNoRow() {
        String table = PeerSystems.markdown(List.of(
            run("erda", 1, 2, 100_000), run("erda", 4, 2, 400_000), run("redis", 1, 2, 50_000)));
        List<String> rows = table.lines().filter(l -> l.startsWith("| shm |")).toList();
        assertThat(rows).containsExactly(
            "| shm | A | 1024 | 1 | 2 | 100000 | 50000 | 2.00 | 5.00 / 5.00 | 7.00 / 7.00 | — | — |");
        assertThat(PeerSystems.markdown(List.of(run("erda", 4, 1, 400_000), run("redis", 1, 4, 50_000)))).isEmpty();
    }

    @Test
    void closedAndOpenLoopRunsAreNotPaired() {
        RunRecord open = new RunRecord("shm", "redis", "A", 1024, 1, 20_000, 5.0, null, 7.0, null, null, null, null, 1,
            20_000L, Map.of());
        assertThat(PeerSystems.markdown(List.of(run("erda", 1, 1, 100_000), open))).isEmpty();
    }
}
