package io.erda.bench.store;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/** The sweep's figures and findings are computed from the rows they name, and say so where a row is missing. */
class ValueSizeSweepTest {

    private static List<StoreBench.Row> rows(String protocol, int size, double putCpuNs, double putOps, double getOps) {
        return List.of(new StoreBench.Row(protocol, "shm", size, "update", 100, putOps, 1, 2, 0, putCpuNs, 0),
                new StoreBench.Row(protocol, "shm", size, "get", 100, getOps, 1, 2, 0, 500, 0));
    }

    @Test
    void serverPutThroughputIsTheInverseOfServerCpuPerPut() {
        ValueSizeSweep.Point p = ValueSizeSweep.points(rows("herd", 64, 4000, 50_000, 100_000)).getFirst();
        assertThat(p.serverPutsPerSecond()).isEqualTo(250_000.0);
        assertThat(p.putLatencyUs()).isEqualTo(20.0);
        assertThat(p.getLatencyUs()).isEqualTo(10.0);
    }

    @Test
    void findingsAreRatiosOfThisRunAndMissingRowsAreNamed() {
        List<StoreBench.Row> all = new ArrayList<>();
        all.addAll(rows("herd", 64, 2000, 100_000, 100_000));
        all.addAll(rows("herd", 262144, 40_000, 5_000, 10_000));
        all.addAll(rows("rdmp-cc", 64, 2500, 80_000, 90_000));
        all.addAll(rows("rdmp-cc", 262144, 2500, 20_000, 25_000));
        String findings = ValueSizeSweep.findings(ValueSizeSweep.points(all), 16384);
        // CC flat (1.00), HERD falls to 2000/40000 = 0.05, CC 16x HERD at 256 KiB
        assertThat(findings).contains("| shm | RDMP-CC server PUT throughput, 262144 B vs 64 B (flat: ≈1) | 1.00 |");
        assertThat(findings).contains("| shm | HERD server PUT throughput, 262144 B vs 64 B (falls) | 0.05 |");
        assertThat(findings).contains("| shm | RDMP-CC vs HERD server PUT throughput at 262144 B | 16.00 |");
        // latency: CC 12.5 µs vs HERD 10 µs below the threshold; 50 vs 200 µs above
        assertThat(findings).contains("| shm | RDMP-CC vs HERD PUT latency, below 16384 B | 1.25 |");
        assertThat(findings).contains("| shm | RDMP-CC vs HERD PUT latency, from 16384 B | 0.25 |");
        assertThat(findings).contains("| shm | RDMP-SA vs HERD server PUT throughput at 65536 B | not in this run |");
    }

    @Test
    void aRunWithoutRdmpKvsProtocolsGetsOneLineInsteadOfTheTable() {
        List<StoreBench.Row> erdaOnly = new ArrayList<>(rows("erda", 1024, 4000, 50_000, 500_000));
        erdaOnly.addAll(rows("erda-one-sided", 1024, 50, 400_000, 500_000));
        String findings = ValueSizeSweep.findings(ValueSizeSweep.points(erdaOnly), 16384);
        assertThat(findings).isEqualTo("RDMP-KV's findings: none, as the run has none of herd, rdmp-sa, rdmp-cc"
                + " (--protocols).\n");
    }
}
