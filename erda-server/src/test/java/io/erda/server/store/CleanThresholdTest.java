package io.erda.server.store;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.junit.jupiter.api.Test;

/** What each clean threshold makes of a head's region size and live bytes ({@code ServerMainTest}: the option). */
class CleanThresholdTest {
    private static final long REGION = 1L << 20;

    @Test
    void autoCleansAHeadOnceItsChainHoldsThreeRegionsAndTwiceItsLiveBytes() {
        // a chain over two regions has a third
        assertThat(CleanThreshold.AUTO.forHead(REGION, 0)).isEqualTo(2 * REGION);
        assertThat(CleanThreshold.AUTO.forHead(REGION, REGION / 2)).isEqualTo(2 * REGION);
        assertThat(CleanThreshold.AUTO.forHead(REGION, 3 * REGION)).isEqualTo(6 * REGION);
    }

    @Test
    void aFixedThresholdIgnoresRegionsAndLiveBytesAndZeroNeverCleans() {
        assertThat(CleanThreshold.of(300_000).forHead(REGION, 10 * REGION)).isEqualTo(300_000);
        assertThat(CleanThreshold.of(0)).isEqualTo(CleanThreshold.OFF);
        assertThat(CleanThreshold.OFF.enabled()).isFalse();
        assertThat(CleanThreshold.OFF.forHead(REGION, 0)).isEqualTo(Long.MAX_VALUE);
    }

    @Test
    void theDefaultPoolHoldsWhatTheHeadsChainsSpanWhenACleaningBegins() {
        assertThat(CleanThreshold.AUTO.defaultPool(4, REGION)).isEqualTo(4 * (CleanThreshold.AUTO_REGIONS - 1));
        assertThat(CleanThreshold.of(3 * REGION + 1).defaultPool(2, REGION)).isEqualTo(8);
        assertThat(CleanThreshold.OFF.defaultPool(4, REGION)).isEqualTo(4); // one per head at least
    }
}
