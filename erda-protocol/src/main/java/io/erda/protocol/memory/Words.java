package io.erda.protocol.memory;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.VarHandle;
import java.nio.ByteOrder;

/**
 * Little-endian 8-byte word access shared by every PM structure.
 *
 * <p>All on-PM formats are little-endian whatever the host, so a client on another machine reads
 * the same bytes the same way. Aligned handles give the release/acquire stores the server needs
 * on mapped memory; unaligned layouts read bytes a client copied into a heap array (alignment 1).
 */
public final class Words {
    /** Aligned little-endian long: for release/acquire accesses on mapped (page-aligned) memory. */
    public static final ValueLayout.OfLong LONG = ValueLayout.JAVA_LONG.withOrder(ByteOrder.LITTLE_ENDIAN);
    /** Unaligned little-endian long: plain reads on any segment, including heap copies. */
    public static final ValueLayout.OfLong LONG_U = ValueLayout.JAVA_LONG_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);
    /** Unaligned little-endian int. */
    public static final ValueLayout.OfInt INT_U = ValueLayout.JAVA_INT_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);
    /** Unaligned little-endian short. */
    public static final ValueLayout.OfShort SHORT_U = ValueLayout.JAVA_SHORT_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);

    private static final VarHandle LONG_HANDLE = LONG.varHandle();

    private Words() {
    }

    /** Release store: every earlier store is visible before this one. */
    public static void setRelease(MemorySegment segment, long offset, long value) {
        LONG_HANDLE.setRelease(segment, offset, value);
    }

    /**
     * Compare-and-set with volatile semantics: stores {@code replacement} only if the word is {@code expected}.
     * The same atomic as the shm provider's remote CAS on the shared mapping, so the two are atomic with each other.
     */
    public static boolean compareAndSet(MemorySegment segment, long offset, long expected, long replacement) {
        return LONG_HANDLE.compareAndSet(segment, offset, expected, replacement);
    }

    /** Acquire load: no later load is performed before this one. */
    public static long getAcquire(MemorySegment segment, long offset) {
        return (long) LONG_HANDLE.getAcquire(segment, offset);
    }

    /** Plain little-endian load on any segment (no alignment requirement). */
    public static long get(MemorySegment segment, long offset) {
        return segment.get(LONG_U, offset);
    }
}
