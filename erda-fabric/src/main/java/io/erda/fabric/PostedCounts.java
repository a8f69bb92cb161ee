package io.erda.fabric;

import java.util.EnumMap;
import java.util.Map;
import java.util.concurrent.atomic.LongAdder;

/**
 * Work requests a fabric instance's endpoints posted, by the operation that went to the device or engine
 * ({@link Fabric#posted}): what a measurement counts per operation of the store, such as "one update is one WRITE and
 * one CAS" (thread-safe, one {@link LongAdder} increment per request).
 */
public final class PostedCounts {
    private final LongAdder[] counts = new LongAdder[Opcode.values().length];

    public PostedCounts() {
        for (int i = 0; i < counts.length; i++) {
            counts[i] = new LongAdder();
        }
    }

    /** One request, as {@code executed}. */
    public void count(Opcode executed) {
        counts[executed.ordinal()].increment();
    }

    /** Every opcode's count so far (zeros included). */
    public Map<Opcode, Long> snapshot() {
        Map<Opcode, Long> m = new EnumMap<>(Opcode.class);
        for (Opcode op : Opcode.values()) {
            m.put(op, counts[op.ordinal()].sum());
        }
        return m;
    }
}
