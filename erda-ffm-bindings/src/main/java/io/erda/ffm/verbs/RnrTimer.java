package io.erda.ffm.verbs;

/**
 * The 5-bit RNR NAK timer encoding of the InfiniBand spec (table 45, {@code ibv_qp_attr.min_rnr_timer}): how long
 * a requester waits after a receiver-not-ready NAK before it retries a SEND or WRITE_WITH_IMM. Code 0 is the
 * longest wait (655.36 ms); codes 1..31 grow from 0.01 ms to 491.52 ms.
 */
public final class RnrTimer {
    private RnrTimer() {}

    /** {@code ibv_qp_attr.rnr_retry} value that retries without limit. */
    public static final int RETRY_FOREVER = 7;
    /** The largest finite {@code rnr_retry}. */
    public static final int MAX_FINITE_RETRIES = 6;

    // In units of 10 microseconds, indexed by code.
    private static final int[] TENS_OF_MICROS = {65536, 1, 2, 3, 4, 6, 8, 12, 16, 24, 32, 48, 64, 96, 128, 192, 256,
            384, 512, 768, 1024, 1536, 2048, 3072, 4096, 6144, 8192, 12288, 16384, 24576, 32768, 49152};

    /** The wait that {@code code} (0..31) stands for. */
    public static long nanos(int code) {
        if (code < 0 || code >= TENS_OF_MICROS.length) {
            throw new IllegalArgumentException("RNR timer code " + code + " outside 0..31");
        }
        return TENS_OF_MICROS[code] * 10_000L;
    }

    /** The code of the shortest wait that is at least {@code nanos} (code 0, 655.36 ms, if none is). */
    public static int codeAtLeast(long nanos) {
        for (int code = 1; code < TENS_OF_MICROS.length; code++) {
            if (nanos(code) >= nanos) {
                return code;
            }
        }
        return 0;
    }
}
