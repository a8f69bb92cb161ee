package io.erda.fabric;

import java.lang.foreign.MemorySegment;
import java.util.Objects;

/**
 * A second copy that one-sided writes into a registration are also placed in, right after the registered memory:
 * the durable image of persistent memory under power-failure emulation (erda-core's {@code PowerFailure}), for
 * registrations whose one-sided writes are durable on placement. Every provider that executes a WRITE or an atomic
 * itself copies the bytes it placed into the mirror (the tcp responder, shm initiators, the software RNIC); a
 * kernel RNIC places writes unseen, so the verbs provider refuses a mirror on a real device.
 *
 * <p>Bytes are copied after they are placed, so concurrent writers of the same bytes may leave the mirror with
 * either's; atomics copy the word as they left it.
 *
 * @param memory  the mirror in this process, as long as the registered segment (providers executing in the
 *                target's process copy into it)
 * @param backing the file and offset {@code memory} maps (initiators in other processes, shm, map it)
 */
public record DurableMirror(MemorySegment memory, Backing backing) {
    public DurableMirror {
        Objects.requireNonNull(memory, "memory");
        Objects.requireNonNull(backing, "backing");
    }

    /** Refuses a mirror whose length differs from the registered segment's. */
    public void requireFits(MemorySegment registered) {
        if (memory.byteSize() != registered.byteSize()) {
            throw new IllegalArgumentException("durable mirror of " + memory.byteSize() + " bytes for a registration of "
                    + registered.byteSize() + " bytes: they must be equally long");
        }
    }

    /** Copies {@code [offset, offset+length)} of {@code registered} (where the bytes were just placed) into the mirror. */
    public void copy(MemorySegment registered, long offset, long length) {
        if (length > 0) {
            MemorySegment.copy(registered, offset, memory, offset, length);
        }
    }
}
