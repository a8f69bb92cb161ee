package io.erda.history;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import org.junit.jupiter.api.Test;

/**
 * Histories from a real register with random overlaps are accepted; the same histories with one read turned stale
 * beyond any explanation are rejected, at that key. Many seeds, each printed on failure.
 */
class RandomHistoryTest {

    @Test
    void historiesOfARealRegisterAreAcceptedAndOneStaleReadIsRejected() {
        int mutated = 0;
        for (long seed = 0; seed < 300; seed++) {
            Random random = new Random(seed);
            List<Operation> ops = SequentialRegister.history("k", 30 + random.nextInt(120), 1 + random.nextInt(6),
                    random.nextInt(80), random);
            CheckResult clean = LinearizabilityChecker.check(History.of(ops));
            assertThat(clean.verdict()).as("seed %d: %s", seed, clean.violations()).isEqualTo("yes");

            List<Operation> wrong = new ArrayList<>(ops);
            int index = SequentialRegister.makeOneReadStale(wrong, random);
            if (index < 0) {
                continue;
            }
            mutated++;
            CheckResult r = LinearizabilityChecker.check(History.of(wrong));
            assertThat(r.verdict()).as("seed %d, read %s", seed, wrong.get(index)).isEqualTo("no");
            assertThat(r.stale() + r.lost()).as("seed %d: %s", seed, r.violations()).isPositive();
            assertThat(r.violations().getFirst().anomalies()).extracting(Anomaly::read).contains(wrong.get(index));
        }
        assertThat(mutated).as("histories that had a read to make stale").isGreaterThan(200);
    }
}
