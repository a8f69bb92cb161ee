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

    /**
     * {@code --verify} (YCSB's dataintegrity) on both PUT paths, four threads updating and reading 50 keys: every read
     * is checked against the value derived from its key, and the one-sided updates' CAS races leave none torn or
     * foreign. A value that fails the check fails the run (YcsbOutputTest, from a real run that did).
     */
    @Test
    @Timeout(120)
    void verifyChecksEveryReadOfBothPutPathsUnderConcurrentUpdates(@TempDir Path out) throws Exception {
        ByteArrayOutputStream log = new ByteArrayOutputStream();
        int status = YcsbCompareStandInTest.run(log, "--protocols", "erda,erda-one-sided", "--peers", "none", "--workloads",
            "A", "--records", "50", "--threads", "4", "--operations", "8000", "--duration", "20", "--value-size", "256",
            "--verify", "--out", out.toString());
        String printed = log.toString(StandardCharsets.UTF_8);
        assertThat(status).as(printed).isZero();
        java.util.regex.Matcher m = java.util.regex.Pattern.compile("(\\d+) reads verified \\(none failed\\)").matcher(printed);
        for (String row : new String[] {"erda", "erda-one-sided"}) {
            assertThat(m.find()).as("a verified count for %s in:%n%s", row, printed).isTrue();
            assertThat(Long.parseLong(m.group(1))).as(row + ": reads verified").isGreaterThan(1000);
        }
        assertThat(Files.readString(out.resolve("raw/shm-erda-one-sided-v256-A-t4.out"))).contains("[VERIFY], Return=OK");
        assertThat(Files.readString(out.resolve("results.md"))).contains("Verified (--verify");
    }
}
