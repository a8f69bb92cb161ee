package io.erda.fabric;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.junit.jupiter.api.Test;

class IdleStrategyTest {

    private static IdleStrategy.Counts counts(String name) {
        return IdleStrategy.counts().get(name);
    }

    @Test
    void aPolicyWithoutParkPhaseTellsTheCallerToBlockOncePerIdlePeriod() {
        IdleStrategy idle = IdleStrategy.Policy.spinYieldThenBlock("test-block", 0, 0).newStrategy();
        assertThat(idle.idle()).as("nothing to spin or yield: block at once").isTrue();
        assertThat(idle.idle()).as("asked again before blocking").isTrue();
        assertThat(counts("test-block").blocks()).isEqualTo(1);
        idle.reset();
        assertThat(idle.idle()).isTrue();
        assertThat(counts("test-block").blocks()).as("a new idle period").isEqualTo(2);
    }

    @Test
    void spinsThenYieldsForTheirTimeThenBlocks() throws InterruptedException {
        long phase = 30_000_000;
        IdleStrategy idle = IdleStrategy.Policy.spinYieldThenBlock("test-phases", phase, phase).newStrategy();
        long start = System.nanoTime();
        while (!idle.idle()) {
            // spins, then yields
        }
        assertThat(System.nanoTime() - start).as("spun and yielded before blocking").isGreaterThanOrEqualTo(2 * phase);
        IdleStrategy.Counts c = counts("test-phases");
        assertThat(c.spins()).isPositive();
        assertThat(c.yields()).isPositive();
        assertThat(c.blocks()).isEqualTo(1);
        assertThat(c.parks()).isZero();
    }

    @Test
    void parksUntilResetAndCountsWhenWorkIsFound() {
        IdleStrategy idle = IdleStrategy.Policy.park("test-park", 1_000, 4_000).newStrategy();
        for (int i = 0; i < 5; i++) {
            assertThat(idle.idle()).as("a park policy never tells the caller to block").isFalse();
        }
        assertThat(counts("test-park").parks()).as("counted when work is found").isZero();
        idle.reset();
        assertThat(counts("test-park").parks()).isEqualTo(5);
        assertThat(counts("test-park").spins()).isZero();
    }

    @Test
    void aSystemPropertyReplacesAPolicysTimings() {
        System.setProperty("erda.idle.test-configured", "1, 2,3000,4000");
        try {
            IdleStrategy.Policy p = IdleStrategy.Policy.spinYieldThenBlock("test-configured", 9, 9);
            assertThat(new long[] {p.spinNanos(), p.yieldNanos(), p.minParkNanos(), p.maxParkNanos()})
                    .containsExactly(1, 2, 3000, 4000);
            assertThat(p.blocks()).isFalse();
        } finally {
            System.clearProperty("erda.idle.test-configured");
        }
    }

    @Test
    void badTimingsAreRefusedNamingTheValue() {
        System.setProperty("erda.idle.test-bad", "1,2,x,4");
        try {
            assertThatThrownBy(() -> IdleStrategy.Policy.park("test-bad", 1, 1))
                    .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("erda.idle.test-bad=1,2,x,4")
                    .hasMessageContaining("'x'");
            System.setProperty("erda.idle.test-bad", "1,2,3");
            assertThatThrownBy(() -> IdleStrategy.Policy.park("test-bad", 1, 1))
                    .hasMessageContaining("SPIN,YIELD,MINPARK,MAXPARK");
        } finally {
            System.clearProperty("erda.idle.test-bad");
        }
        assertThatThrownBy(() -> IdleStrategy.Policy.spinYieldThenBlock("test-negative", -1, 0))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("spin -1 ns");
        assertThatThrownBy(() -> IdleStrategy.Policy.park("test-inverted", 5_000, 1_000))
                .hasMessageContaining("first park 5000 ns").hasMessageContaining("1000 ns");
    }
}
