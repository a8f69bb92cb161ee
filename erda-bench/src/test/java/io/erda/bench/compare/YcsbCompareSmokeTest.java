package io.erda.bench.compare;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/** The driver against the real store: an embedded Erda server on shm, YCSB-A with tiny counts. */
class YcsbCompareSmokeTest {

    @Test
    @Timeout(60)
    void erdaRunsYcsbAOnShmAndReportsEveryFigure(@TempDir Path out) throws Exception {
        ByteArrayOutputStream log = new ByteArrayOutputStream();
        int status = YcsbCompareStandInTest.run(log, "--protocols", "erda", "--peers", "none", "--workloads", "A", "--records", "200",
            "--operations", "400", "--duration", "10", "--value-size", "256", "--out", out.toString());
        String printed = log.toString(StandardCharsets.UTF_8);
        assertThat(status).as(printed).isZero();
        String json = Files.readString(out.resolve("summary.json"));
        assertThat(json).contains("\"fabric\": \"shm\", \"protocol\": \"erda\", \"workload\": \"A\", \"value_size\": 256",
            "\"target_ops\": null", "\"latency\": {\"READ\": {\"count\": ", "\"UPDATE\": {\"count\": ");
        // closed loop has no target; every figure is there
        assertThat(json.replace("\"target_ops\": null", "")).doesNotContain("null");
        assertThat(Files.readString(out.resolve("raw/shm-erda-v256-A-t1.stats"))).contains("nvm_bytes_written");
    }
}
