package io.erda.bench.compare;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.Test;

/**
 * Fixtures: real YCSB 0.17.0 stdout of ErdaYcsbDb runs (src/test/resources/ycsb-output): workloadc-erda-shm.out
 * against the Erda store, the others against the test stand-in (a server killed mid-run, no server at all).
 */
class YcsbOutputTest {

    @Test
    void successfulRunGivesThroughputLatenciesAndCounts() throws IOException {
        YcsbOutput o = YcsbOutput.parse(fixture("workloada-ok.out"));
        assertThat(o.throughput()).isCloseTo(27324.16, within(0.01));
        assertThat(o.ok("READ")).isEqualTo(40960);
        assertThat(o.ok("UPDATE")).isEqualTo(41477);
        assertThat(o.okOperations()).isEqualTo(40960 + 41477);
        assertThat(o.meanMicros("READ")).isCloseTo(30.70, within(0.01));
        assertThat(o.p99Micros("READ")).isEqualTo(83.0);
        assertThat(o.meanMicros("UPDATE")).isCloseTo(34.0, within(0.1));
        assertThat(o.p99Micros("UPDATE")).isEqualTo(91.0);
        assertThat(o.failures()).isEmpty();
    }

    @Test
    void readOnlyRunAgainstTheErdaStoreHasReadFiguresOnly() throws IOException {
        YcsbOutput o = YcsbOutput.parse(fixture("workloadc-erda-shm.out"));
        assertThat(o.throughput()).isCloseTo(109309.01, within(0.01));
        assertThat(o.okOperations()).isEqualTo(549715);
        assertThat(o.meanMicros("READ")).isCloseTo(6.497, within(0.001));
        assertThat(o.p99Micros("READ")).isEqualTo(20.0);
        assertThat(o.meanMicros("UPDATE")).isNull();
        assertThat(o.failures()).isEmpty();
    }

    @Test
    void operationTypeTheWorkloadDoesNotRunHasNoFigures() throws IOException {
        YcsbOutput o = YcsbOutput.parse(fixture("workloada-ok.out"));
        assertThat(o.meanMicros("INSERT")).isNull();
        assertThat(o.ok("INSERT")).isZero();
    }

    /**
     * verify-failed.out: a real run with YCSB's dataintegrity check reading 20 records loaded without it (random values,
     * so none matches the value derived from its key): the check's section is no operation, and its mismatches fail
     * the run. workloada-verified-one-sided.out: the check passed on a server in one-sided PUT mode, two threads.
     */
    @Test
    void readsThatFailTheIntegrityCheckFailTheRunAndTheCheckIsNoOperation() throws IOException {
        YcsbOutput failed = YcsbOutput.parse(fixture("verify-failed.out"));
        assertThat(failed.ok("READ")).isEqualTo(200);
        assertThat(failed.verified()).isZero();
        assertThat(failed.okOperations()).isEqualTo(200);
        assertThat(failed.failures()).containsExactly("VERIFY Return=UNEXPECTED_STATE: 200");

        YcsbOutput passed = YcsbOutput.parse(fixture("workloada-verified-one-sided.out"));
        assertThat(passed.verified()).isEqualTo(passed.ok("READ")).isPositive();
        assertThat(passed.okOperations()).isEqualTo(passed.ok("READ") + passed.ok("UPDATE")).isEqualTo(400);
        assertThat(passed.failures()).isEmpty();
    }

    @Test
    void errorsReturnedByTheBindingFailTheRun() throws IOException {
        YcsbOutput o = YcsbOutput.parse(fixture("workloada-server-killed.out"));
        assertThat(o.failures()).contains("READ Return=ERROR: 8944", "UPDATE Return=ERROR: 8989",
            "UPDATE-FAILED operations: 8989", "READ-FAILED operations: 8944");
    }

    @Test
    void bindingInitFailureFailsTheRunWithItsException() throws IOException {
        YcsbOutput o = YcsbOutput.parse(fixture("init-failed.out"));
        assertThat(o.throughput()).isZero();
        assertThat(o.failures()).first().asString()
            .startsWith("site.ycsb.DBException: cannot connect to tcp://127.0.0.1:37969 with protocol memory");
    }

    @Test
    void outputWithoutMeasurementsFails() {
        assertThat(YcsbOutput.parse("YCSB Client 0.17.0\n").failures())
            .containsExactly("no [OVERALL] Throughput(ops/sec) in the output");
    }

    static String fixture(String name) throws IOException {
        try (InputStream in = YcsbOutputTest.class.getResourceAsStream("/ycsb-output/" + name)) {
            return new String(in.readAllBytes(), StandardCharsets.UTF_8);
        }
    }
}
