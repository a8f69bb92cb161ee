package io.erda.fabric;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.VarHandle;
import java.util.Objects;

/**
 * A second copy that one-sided writes into a registration are also placed in, right after the registered memory:
 * the durable image of persistent memory under power-failure emulation (erda-core's {@code PowerFailure}), for
 * registrations whose one-sided writes become durable without the server's help. Every provider that executes a WRITE or an atomic
 * itself copies the bytes it placed into the mirror (the tcp responder, shm initiators, the software RNIC); a
 * kernel RNIC places writes unseen, so the verbs provider refuses a mirror on a real device.
 *
 * <p>The mirror's owner copies into it too (its own persists). Both copy the registered memory's current bytes
 * while holding the mirror's lock word (a spin lock shared through the mirror file: CAS 0 to 1, store 0 to
 * release; a holder gone for {@link #LOCK_SPIN_NANOS} is taken over), so the mirror sees the bytes in the order
 * they changed even when the owner overwrites and persists bytes a peer just wrote.
 *
 * <p>When a placed write reaches the mirror is its {@link Durability}: at once, or, to emulate the taxonomy's
 * configurations where a WRITE's completion does not make it durable (Kashyap et al., §3.1; erda-protocol's {@code
 * PmConfiguration}), only once a later request of the same connection shows it placed or fenced; until then it waits
 * in the connection's {@link UnfencedWrites}, as in the RNIC's buffers, and a power failure can take it.
 *
 * @param memory         the mirror in this process, as long as the registered segment (providers executing in the
 *                       target's process copy into it)
 * @param backing        the file and offset {@code memory} maps (initiators in other processes, shm, map it)
 * @param lock           the lock word in this process (8 bytes, 8-byte aligned)
 * @param lockFileOffset where the lock word lies in {@code backing}'s file
 * @param durability     when a placed write is copied into the mirror
 */
public record DurableMirror(MemorySegment memory, Backing backing, MemorySegment lock, long lockFileOffset,
                            Durability durability) {
    /** How long a copy waits for the lock before it takes it from a holder presumed dead. */
    public static final long LOCK_SPIN_NANOS = 1_000_000_000L;
    private static final VarHandle LOCK = ValueLayout.JAVA_LONG.varHandle();

    /**
     * When a one-sided write placed in the registration becomes durable: what a power failure cannot take from it
     * any more. Each is a stage of the taxonomy's path from the RNIC to PM (paper §2, §3.1).
     */
    public enum Durability {
        /** As placed: the provider copies it at once (what the RNIC received is durable: WSP; or a READ always follows). */
        ON_PLACEMENT,
        /**
         * Once shown placed: a later READ, FLUSH, atomic, SEND or WRITE_WITH_IMM of the connection, which the
         * responder handles only after the write is placed (MHP: placed data is durable).
         */
        ONCE_SHOWN_PLACED,
        /**
         * Once fenced: a later READ or FLUSH of the connection, which completes only once the write went through to
         * the memory controller (DMP with DDIO off).
         */
        ONCE_FENCED
    }

    /** A mirror whose writes are durable as placed. */
    public DurableMirror(MemorySegment memory, Backing backing, MemorySegment lock, long lockFileOffset) {
        this(memory, backing, lock, lockFileOffset, Durability.ON_PLACEMENT);
    }

    public DurableMirror {
        Objects.requireNonNull(durability, "durability");
        Objects.requireNonNull(memory, "memory");
        Objects.requireNonNull(backing, "backing");
        Objects.requireNonNull(lock, "lock");
        if (lockFileOffset < 0) {
            throw new IllegalArgumentException("lock file offset " + lockFileOffset + " is negative");
        }
    }

    /** Refuses a mirror whose length differs from the registered segment's. */
    public void requireFits(MemorySegment registered) {
        if (memory.byteSize() != registered.byteSize()) {
            throw new IllegalArgumentException("durable mirror of " + memory.byteSize() + " bytes for a registration "
                    + "of " + registered.byteSize() + " bytes: they must be equally long");
        }
    }

    /** The same mirror, its writes durable when {@code when} says. */
    public DurableMirror withDurability(Durability when) {
        return new DurableMirror(memory, backing, lock, lockFileOffset, when);
    }

    /** Copies {@code [offset, offset+length)} of {@code registered} (where bytes were just placed) into the mirror. */
    public void copy(MemorySegment registered, long offset, long length) {
        copyLocked(registered, memory, lock, offset, length);
    }

    /**
     * Copies {@code [offset, offset+length)} of {@code from} into {@code to} under the lock word {@code lock}: what
     * a provider whose mirror mapping is its own (shm) calls.
     */
    public static void copyLocked(MemorySegment from, MemorySegment to, MemorySegment lock, long offset, long length) {
        if (length <= 0) {
            return;
        }
        long giveUp = System.nanoTime() + LOCK_SPIN_NANOS;
        while (!LOCK.compareAndSet(lock, 0L, 0L, 1L) && System.nanoTime() - giveUp < 0) {
            Thread.onSpinWait();
        }
        try {
            MemorySegment.copy(from, offset, to, offset, length);
        } finally {
            LOCK.setVolatile(lock, 0L, 0L);
        }
    }
}
