package io.erda.bench.compare;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.List;
import org.junit.jupiter.api.Test;
import picocli.CommandLine;

class YcsbCompareOptionsTest {

    /** Open-loop threads spin only while each has a core and one is left for the server. */
    @Test
    void openLoopThreadsSpinOnlyWhereEveryOneHasACoreBesideTheServers() {
        assertThat(YcsbCompare.spinPacing(1, 1, 2)).isTrue();
        assertThat(YcsbCompare.spinPacing(2, 1, 2)).isFalse();
        assertThat(YcsbCompare.spinPacing(1, 2, 2)).isFalse();
        assertThat(YcsbCompare.spinPacing(3, 2, 8)).isTrue();
        assertThat(YcsbCompare.spinPacing(4, 2, 8)).isFalse();
        assertThat(YcsbCompare.spinPacing(1, 1, 1)).isFalse();
    }

    @Test
    void regionSizeTakesBytesOrASuffixAsErdaServerDoes() {
        YcsbCompare bytes = new YcsbCompare();
        new CommandLine(bytes).parseArgs("--region-size", "4194304");
        assertThat(bytes.regionSize).isEqualTo(4L << 20);
        YcsbCompare suffixed = new YcsbCompare();
        new CommandLine(suffixed).parseArgs("--region-size", "64m");
        assertThat(suffixed.regionSize).isEqualTo(64L << 20);
        assertThatThrownBy(() -> new CommandLine(new YcsbCompare()).parseArgs("--region-size", "lots"))
                .hasMessageContaining("'lots' is not a size");
    }

    @Test
    void theFullSweepRunsThreadsInOneProcessThenProcessesOfTheBaseThreads() {
        YcsbCompare c = new YcsbCompare();
        new CommandLine(c).parseArgs("--full", "--protocols", "erda", "--max-threads", "2", "--max-clients", "3");
        List<YcsbCompare.Group> plan = c.plan(List.of(Workload.C));
        YcsbCompare.Group kib = plan.stream().filter(g -> g.valueSize() == 1024).findFirst().orElseThrow();
        assertThat(kib.steps()).extracting(s -> s.threads() + "x" + s.clients()).containsExactly("1x1", "2x1", "1x2", "1x3");
        YcsbCompare.Group small = plan.stream().filter(g -> g.valueSize() == 16).findFirst().orElseThrow();
        assertThat(small.steps()).extracting(s -> s.threads() + "x" + s.clients()).containsExactly("1x1");
    }

    @Test
    void theValueSizeSweepRunsEveryProtocolAtEverySizeWithSuffixes() {
        YcsbCompare c = new YcsbCompare();
        new CommandLine(c).parseArgs("--protocols", "herd,rdmp-cc", "--value-sizes", "64,1k,256k");
        List<YcsbCompare.Group> plan = c.plan(List.of(Workload.UPDATE_ONLY));
        assertThat(plan).extracting(g -> g.protocol() + "@" + g.valueSize())
                .containsExactly("herd@64", "herd@1024", "herd@262144", "rdmp-cc@64", "rdmp-cc@1024", "rdmp-cc@262144");
    }

    @Test
    void aSweepSizeOverTheLimitIsRefusedNamingIt() {
        assertThat(refusal("--value-sizes", "64,512k")).contains("--value-sizes: 524288 is outside [1, 262144]");
        assertThat(refusal("--value-sizes", "64", "--full")).contains("--value-sizes and --full both choose");
    }

    @Test
    void badMeasurementOptionsAreRefusedNamingTheValueAndTheLimit() {
        assertThat(refusal("--warmup", "-1")).contains("--warmup -1.0 is not between 0 and 3600");
        assertThat(refusal("--clients", "0")).contains("--clients 0 must all be at least 1");
        assertThat(refusal("--target-ops", "-5")).contains("--target-ops -5 must be 0 (closed loop) or from 1");
        assertThat(refusal("--clients", "4", "--target-ops", "3")).contains("--target-ops 3 must be 0 (closed loop) or from 4");
    }

    private static String refusal(String... args) {
        java.io.StringWriter err = new java.io.StringWriter();
        CommandLine cl = new CommandLine(new YcsbCompare(new java.io.PrintStream(java.io.OutputStream.nullOutputStream())));
        cl.setErr(new java.io.PrintWriter(err, true));
        String[] all = java.util.stream.Stream.concat(java.util.Arrays.stream(args), java.util.stream.Stream.of("--protocols", "memory"))
            .toArray(String[]::new);
        assertThat(cl.execute(all)).isNotZero();
        return err.toString();
    }
}
