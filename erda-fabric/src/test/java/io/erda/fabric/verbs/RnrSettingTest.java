package io.erda.fabric.verbs;

import static org.assertj.core.api.Assertions.assertThat;

import io.erda.ffm.verbs.RnrTimer;
import java.time.Duration;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

class RnrSettingTest {
    @ParameterizedTest
    @ValueSource(longs = {0, 1, 20, 50, 100, 1000, 3900})
    void finiteTimeoutsWaitAtLeastTheTimeoutAndLessThanTwiceItPlusOneTimerStep(long millis) {
        RnrSetting s = RnrSetting.of(Duration.ofMillis(millis));
        assertThat(s.retry()).isEqualTo(RnrTimer.MAX_FINITE_RETRIES);
        long total = s.retry() * RnrTimer.nanos(s.timerCode());
        assertThat(total).isGreaterThanOrEqualTo(Duration.ofMillis(millis).toNanos());
        assertThat(total).isLessThanOrEqualTo(2 * Duration.ofMillis(millis).toNanos() + 6 * RnrTimer.nanos(1));
    }

    @ParameterizedTest
    @ValueSource(longs = {4000, 30_000})
    void timeoutsBeyondSixLongestTimersRetryForever(long millis) {
        assertThat(RnrSetting.of(Duration.ofMillis(millis)).retry()).isEqualTo(RnrTimer.RETRY_FOREVER);
    }
}
