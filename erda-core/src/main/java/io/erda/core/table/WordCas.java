package io.erda.core.table;

import io.erda.protocol.memory.Words;
import java.lang.foreign.MemorySegment;

/**
 * How {@link HopscotchTable} changes an atomic word: one 8-byte compare-and-set at an offset of the table file's data
 * area, true if it won. The CPU's CAS ({@link #cpu}) is atomic with clients' remote CASes where the fabric's atomics
 * are global (tcp and shm execute a remote CAS with the same VarHandle CAS; verbs on IBV_ATOMIC_GLOB). On a device
 * whose atomics are atomic only among its own (IBV_ATOMIC_HCA, as rxe reports) the server must CAS through that device
 * (docs/one-sided-put.md, [word-cas]).
 */
@FunctionalInterface
public interface WordCas {
    boolean compareAndSet(long dataOffset, long expected, long replacement);

    /** The CPU's CAS on {@code data} (the table file's data area). */
    static WordCas cpu(MemorySegment data) {
        return (dataOffset, expected, replacement) -> Words.compareAndSet(data, dataOffset, expected, replacement);
    }
}
