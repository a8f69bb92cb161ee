package io.erda.bench.compare;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** RDMP-KV's acceptance lines are judged from the runs they name, met or not, and absent without the protocols. */
class ValueSizeTableTest {

    private static RunRecord run(String protocol, String workload, int size, double updateUs, double cpuUs) {
        return new RunRecord("shm", protocol, workload, size, 1, 1000, 5.0, 9.0, updateUs, 20.0, 100.0, cpuUs, 7.0, 1,
                null, Map.of(), null);
    }

    @Test
    void ycsbAUpdateLatencyAndServerCpuAreJudgedAgainstHerdAndRdmpCc() {
        String lines = ValueSizeTable.acceptance(List.of(run("herd", "A", 65536, 40, 30),
                run("rdmp-sa", "A", 65536, 30, 20), run("rdmp-cc", "A", 65536, 50, 10), run("erda", "A", 65536, 10, 5),
                run("herd", "update-only", 65536, 40, 30), run("rdmp-cc", "update-only", 65536, 50, 6)));
        assertThat(lines).contains("- met YCSB-A update mean of rdmp-sa ≤ HERD's at 65536 B (paper: 0.62×): measured 0.75");
        assertThat(lines).contains("- NOT met YCSB-A update mean of rdmp-cc ≤ HERD's at 65536 B (paper: 0.35×): measured 1.25");
        assertThat(lines).contains("- met YCSB-A server CPU per operation of Erda < RDMP-CC's at 65536 B");
        assertThat(lines).contains("- met server PUT throughput of RDMP-CC > HERD's at 65536 B (paper: 22× at 256 KB): measured 5.00");
    }

    @Test
    void withoutRdmpProtocolsThereAreNoLines() {
        assertThat(ValueSizeTable.acceptance(List.of(run("erda", "A", 1024, 10, 5)))).isEmpty();
    }
}
