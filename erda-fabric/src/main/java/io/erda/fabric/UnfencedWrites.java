package io.erda.fabric;

import java.lang.foreign.MemorySegment;
import java.util.ArrayDeque;
import java.util.Iterator;

/**
 * The one-sided writes of one connection that are placed in a registration with a {@link DurableMirror} but not yet
 * durable by its {@link DurableMirror.Durability}: the emulation of what the responder's RNIC (or, without DDIO, its
 * I/O controller) may still hold when the power fails. A provider reports every write it placed ({@link #placed}) and
 * every later request that shows earlier writes placed ({@link #placementShown}: READ, FLUSH, atomics, SEND,
 * WRITE_WITH_IMM) or fenced ({@link #fenced}: READ, FLUSH); a write then durable is copied into its mirror. Beyond
 * {@link #CAPACITY} writes the oldest drains on its own, as an RNIC's buffers do, so what a power failure can take is
 * the last few writes of a connection that nothing followed, not all of them.
 *
 * <p>The copy takes the registered memory's bytes at the time it drains, under the mirror's lock. A write whose
 * registration was unmapped meanwhile (a region retired) is dropped: its file is gone. Not thread-safe: one per
 * connection, used by the thread that executes the connection's requests in order (tcp's responder, shm's initiator
 * under its endpoint's lock).
 */
public final class UnfencedWrites {
    /** Writes a connection holds before the oldest drains: ResponderMemory's RNIC holds as many (erda-remotelog). */
    public static final int CAPACITY = 4;

    private record Write(MemorySegment registered, MemorySegment mirror, MemorySegment lock, long offset, long length,
                         DurableMirror.Durability durability) {
        void copy() {
            try {
                DurableMirror.copyLocked(registered, mirror, lock, offset, length);
            } catch (IllegalStateException unmapped) {
                // the region was deregistered and unmapped since: nothing of it is recovered
            }
        }
    }

    private final ArrayDeque<Write> writes = new ArrayDeque<>();

    /**
     * A one-sided write placed {@code [offset, offset+length)} of {@code registered}, whose mirror is {@code mirror}
     * under {@code lock}: copied now if {@code durability} says so, else held.
     */
    public void placed(MemorySegment registered, MemorySegment mirror, MemorySegment lock, long offset, long length,
                       DurableMirror.Durability durability) {
        if (length <= 0) {
            return;
        }
        Write w = new Write(registered, mirror, lock, offset, length, durability);
        if (durability == DurableMirror.Durability.ON_PLACEMENT) {
            w.copy();
            return;
        }
        writes.addLast(w);
        while (writes.size() > CAPACITY) {
            writes.pollFirst().copy();
        }
    }

    /** As {@link #placed(MemorySegment, MemorySegment, MemorySegment, long, long, DurableMirror.Durability)}. */
    public void placed(MemorySegment registered, DurableMirror mirror, long offset, long length) {
        placed(registered, mirror.memory(), mirror.lock(), offset, length, mirror.durability());
    }

    /** A request that the responder handles only after every earlier write is placed: those placed is durable for. */
    public void placementShown() {
        if (writes.isEmpty()) {
            return; // no emulation, or nothing held: no iterator on the request path
        }
        for (Iterator<Write> it = writes.iterator(); it.hasNext(); ) {
            Write w = it.next();
            if (w.durability == DurableMirror.Durability.ONCE_SHOWN_PLACED) {
                w.copy();
                it.remove();
            }
        }
    }

    /** A READ or FLUSH: every earlier write is through to the memory controller, so durable whatever it waited for. */
    public void fenced() {
        while (!writes.isEmpty()) {
            writes.pollFirst().copy();
        }
    }

    /** Writes held. */
    public int held() {
        return writes.size();
    }
}
