package io.erda.bench.compare;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import org.junit.jupiter.api.Test;

class SummaryJsonTest {

    @Test
    void recordHasTheAgreedFieldsInOrderWithNullsWhereAFigureDoesNotApply() {
        RunRecord readOnly = new RunRecord("shm", "erda", "C", 1024, 2, 96350.5, 3.25, 9.0, null, null, 0.0, 0.0, 3.25);
        assertThat(SummaryJson.write(List.of(readOnly))).isEqualTo("""
            [
              {"fabric": "shm", "protocol": "erda", "workload": "C", "value_size": 1024, "threads": 2, \
            "throughput_ops": 96350.5, "read_mean_us": 3.25, "read_p99_us": 9, "update_mean_us": null, \
            "update_p99_us": null, "nvm_bytes_per_op": 0, "nvm_cleaner_bytes_per_op": null, "server_cpu_us_per_op": 0, \
            "cleaner_cpu_us_per_op": null, "clients": 1, "target_ops": null, "latency": {}}
            ]
            """);
    }

    @Test
    void openLoopRunsOfSeveralProcessesCarryTheirTargetAndEveryHistogramsFigures() {
        RunRecord r = new RunRecord("shm", "erda", "C", 1024, 2, 5000, 80.0, 210.0, null, null, 0.0, 0.0, 80.0, 3, 5000L,
            java.util.Map.of("Intended-READ", new LatencyFigures(15000, 80.0, 4, 210, 190000, 200100),
                "READ", new LatencyFigures(15000, 5.5, 4, 9, 12, 200000)));
        assertThat(SummaryJson.write(List.of(r))).contains("\"clients\": 3, \"target_ops\": 5000, \"latency\": {"
            + "\"READ\": {\"count\": 15000, \"mean_us\": 5.5, \"p50_us\": 4, \"p99_us\": 9, \"p999_us\": 12, \"max_us\": 200000}, "
            + "\"Intended-READ\": {\"count\": 15000, \"mean_us\": 80, \"p50_us\": 4, \"p99_us\": 210, \"p999_us\": 190000, "
            + "\"max_us\": 200100}}}");
    }

    @Test
    void oneObjectPerRunInRunOrder() {
        RunRecord a = new RunRecord("tcp", "redo-log", "update-only", 16, 1, 1000, null, null, 50.0, 80.0, 2100.25, 4.5, 50.0);
        RunRecord b = new RunRecord("tcp", "erda", "update-only", 16, 1, 1200, null, null, 40.0, 70.0, 1050.125, 2.0, 40.0);
        String json = SummaryJson.write(List.of(a, b));
        assertThat(json).startsWith("[\n  {\"fabric\": \"tcp\", \"protocol\": \"redo-log\"")
            .contains("},\n  {\"fabric\": \"tcp\", \"protocol\": \"erda\"")
            .contains("\"read_mean_us\": null, \"read_p99_us\": null, \"update_mean_us\": 50")
            .contains("\"nvm_bytes_per_op\": 1050.125").endsWith("}\n]\n");
    }

    @Test
    void numbersJsonCannotHoldAreNull() {
        assertThat(SummaryJson.number(Double.NaN)).isEqualTo("null");
        assertThat(SummaryJson.number(Double.POSITIVE_INFINITY)).isEqualTo("null");
        assertThat(SummaryJson.number(1.0 / 3)).isEqualTo("0.333");
    }

    @Test
    void noRunsIsAnEmptyArray() {
        assertThat(SummaryJson.write(List.of())).isEqualTo("[]\n");
    }

    @Test
    void stringsAreEscaped() {
        assertThat(SummaryJson.string("a\"b\\c\n")).isEqualTo("\"a\\\"b\\\\c\\u000a\"");
    }
}
