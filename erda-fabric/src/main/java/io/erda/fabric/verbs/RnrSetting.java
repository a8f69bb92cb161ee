package io.erda.fabric.verbs;

import io.erda.ffm.verbs.RnrTimer;
import java.time.Duration;

/**
 * How {@code EndpointOptions.rnrTimeout} becomes verbs attributes. A SEND or WRITE_WITH_IMM that meets an empty
 * receive queue is retried {@code rnr_retry} times (set on the sender, RTS), each after the RNR NAK timer that the
 * <em>receiver</em> set as {@code min_rnr_timer} (RTR). So each side sends the timer code it wants during connection
 * set-up and the peer applies it: the wait is about {@code rnr_retry x timer}, never less than the timeout.
 * <ul>
 *   <li>timeout up to 6 x 655.36 ms (3.9 s): rnr_retry 6, timer the shortest code of at least timeout / 6
 *       (100 ms: 6 x 20.48 ms; 50 ms: 6 x 10.24 ms);</li>
 *   <li>longer: rnr_retry 7, which verbs defines as "retry forever"; a dead peer is then detected by the side
 *       channel or the transport retry count, not by RNR.</li>
 * </ul>
 */
record RnrSetting(int retry, int timerCode) {
    static RnrSetting of(Duration timeout) {
        long nanos = Math.max(0, timeout.toNanos());
        long perRetry = (nanos + RnrTimer.MAX_FINITE_RETRIES - 1) / RnrTimer.MAX_FINITE_RETRIES;
        if (perRetry > RnrTimer.nanos(0)) {
            return new RnrSetting(RnrTimer.RETRY_FOREVER, 0);
        }
        return new RnrSetting(RnrTimer.MAX_FINITE_RETRIES, RnrTimer.codeAtLeast(perRetry));
    }
}
