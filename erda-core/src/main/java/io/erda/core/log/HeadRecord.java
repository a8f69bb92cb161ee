package io.erda.core.log;

/**
 * The durable 8-byte record of one head in {@link HeadRecords}: which chain generation the head
 * serves and how far cleaning has got. One word, so every transition is one persisted 8-byte store.
 *
 * <pre>
 *  63        56 55                    32 31                              0
 * +------------+------------------------+---------------------------------+
 * | Phase (8)  |        zero (24)       |        Generation (32)          |
 * +------------+------------------------+---------------------------------+
 * </pre>
 *
 * <p>An all-zero record is IDLE with generation 0: a new head.
 */
public final class HeadRecord {
    public static final int LENGTH = 8;
    private static final int PHASE_SHIFT = 56;
    private static final long GENERATION_MASK = 0xFFFF_FFFFL;

    private HeadRecord() {
    }

    public static long of(CleaningPhase phase, int generation) {
        return ((long) phase.code() << PHASE_SHIFT) | (generation & GENERATION_MASK);
    }

    public static CleaningPhase phase(long record) {
        return CleaningPhase.of((int) (record >>> PHASE_SHIFT));
    }

    public static int generation(long record) {
        return (int) (record & GENERATION_MASK);
    }

    public static String toString(long record) {
        return phase(record) + "(" + Integer.toUnsignedString(generation(record)) + ")";
    }
}
