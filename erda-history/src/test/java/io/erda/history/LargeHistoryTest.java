package io.erda.history;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.Set;
import java.util.TreeSet;
import org.junit.jupiter.api.Test;

/**
 * 200 000 operations over 1 000 keys, as a fault campaign of some minutes records: every key is decided (none
 * unknown), the ones made wrong and no others are reported. Correctness only: the time it takes is not asserted.
 */
class LargeHistoryTest {

    @Test
    void twoHundredThousandOperationsOverAThousandKeysAreAllDecided() {
        Random random = new Random(42);
        List<Operation> ops = new ArrayList<>();
        Set<String> wrong = new TreeSet<>();
        for (int k = 0; k < 1000; k++) {
            String key = "key" + k;
            List<Operation> history = new ArrayList<>(SequentialRegister.history(key, 200, 4, 40, random));
            if (k % 100 == 7 && SequentialRegister.makeOneReadStale(history, random) >= 0) {
                wrong.add(key);
            }
            ops.addAll(history);
        }
        java.util.Collections.shuffle(ops, random); // the checker must not rely on the order of its input
        CheckResult r = LinearizabilityChecker.check(History.of(ops));
        assertThat(r.keys()).isEqualTo(1000);
        assertThat(r.unknownKeys()).isEmpty();
        assertThat(r.ok() + r.failed() + r.indeterminate()).isEqualTo(200_000);
        assertThat(wrong).hasSize(10);
        assertThat(r.violations()).extracting(Violation::key).containsExactlyInAnyOrderElementsOf(wrong);
    }
}
