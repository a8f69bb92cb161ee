package io.erda.bench.store;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import org.junit.jupiter.api.Test;

/** scale-bench's attribution of slow inserts to the JVMs' pauses and the platform's hiccups. */
class StallCausesTest {
    private static final long MS = 1_000_000;

    @Test
    void eachStallCountsOnceAndTheMaximaLeaveOutWhatItOverlapped() {
        List<long[]> stalls = List.of(
            new long[] {10 * MS, 9 * MS, 1},    // overlaps the server pause [12, 13) ms
            new long[] {30 * MS, 7 * MS, 2},    // the client pause [31, 32) ms and the hiccup [33, 38) ms
            new long[] {50 * MS, 6 * MS, 3},    // only the hiccup [54, 60) ms
            new long[] {70 * MS, 3 * MS, 4},    // none
            new long[] {80 * MS, 2 * MS, 5});   // none: ends a millisecond before the hiccup at 83 ms
        List<Pauses.Pause> server = List.of(new Pauses.Pause(12 * MS, MS, "server GC"));
        List<Pauses.Pause> client = List.of(new Pauses.Pause(31 * MS, MS, "client GC"));
        List<Pauses.Pause> hiccups = List.of(new Pauses.Pause(33 * MS, 5 * MS, "probe 5 ms late"),
            new Pauses.Pause(54 * MS, 6 * MS, "probe 6 ms late"), new Pauses.Pause(83 * MS, MS, "probe 1 ms late"));

        ScaleBench.StallCauses causes = ScaleBench.StallCauses.of(stalls, 800_000, server, client, hiccups);

        assertThat(causes.withServer()).isEqualTo(1);
        assertThat(causes.withClient()).isEqualTo(1);
        assertThat(causes.withHiccup()).isEqualTo(1);
        assertThat(causes.maxWithoutPlatformNanos()).as("the server-pause stall overlapped no hiccup").isEqualTo(9 * MS);
        assertThat(causes.maxWithoutPlatformOrPausesNanos()).isEqualTo(3 * MS);
    }

    @Test
    void withEveryStallExplainedTheMaximaAreTheFastInserts() {
        List<long[]> stalls = List.<long[]>of(new long[] {10 * MS, 4 * MS, 1});
        List<Pauses.Pause> hiccups = List.of(new Pauses.Pause(11 * MS, 3 * MS, "probe 3 ms late"));

        ScaleBench.StallCauses causes = ScaleBench.StallCauses.of(stalls, 900_000, List.of(), List.of(), hiccups);

        assertThat(causes.maxWithoutPlatformNanos()).isEqualTo(900_000);
        assertThat(causes.maxWithoutPlatformOrPausesNanos()).isEqualTo(900_000);
    }
}
