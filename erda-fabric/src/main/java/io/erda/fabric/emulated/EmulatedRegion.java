package io.erda.fabric.emulated;

import io.erda.fabric.Access;
import io.erda.fabric.Fabric;
import io.erda.fabric.MemoryRegion;
import io.erda.fabric.RegisterOptions;
import io.erda.fabric.Status;
import io.erda.fabric.emulated.RegionTable.Check;
import java.lang.foreign.MemorySegment;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * A registration of a software provider: the segment, its options and one key that serves as lkey and rkey alike,
 * with the checks a software NIC makes before it touches registered memory: {@link RegionTable} checks a peer's
 * one-sided access, {@link #checkLocal} a request's own buffer.
 *
 * @param <F> the provider's fabric
 */
public abstract class EmulatedRegion<F extends Fabric> implements MemoryRegion, RegionTable.Entry {
    private final F fabric;
    private final MemorySegment segment;
    private final RegisterOptions options;
    private final int key;
    /** The access rights as bits by ordinal: checked on every request, where the options' Set compared enums. */
    private final int accessBits;
    private final AtomicBoolean closed = new AtomicBoolean();

    protected EmulatedRegion(F fabric, MemorySegment segment, RegisterOptions options, int key) {
        if (options.durableMirror() != null) {
            options.durableMirror().requireFits(segment);
        }
        this.fabric = fabric;
        this.segment = segment;
        this.options = options;
        this.key = key;
        int bits = 0;
        for (Access a : options.access()) {
            bits |= 1 << a.ordinal();
        }
        this.accessBits = bits;
    }

    /**
     * The check a work request's local buffer, or a posted receive's, passes before the provider reads or writes it:
     * a live registration of {@code fabric}, {@code [offset, +length)} inside it ({@link io.erda.fabric.WorkRequest}
     * and {@link io.erda.fabric.RecvRequest} make both non-negative), and LOCAL_WRITE if the operation writes it.
     */
    public static Check<EmulatedRegion<?>> checkLocal(Fabric fabric, MemoryRegion region, long offset, long length,
                                                  boolean writesLocal) {
        if (!(region instanceof EmulatedRegion<?> r) || r.fabric != fabric || r.closed.get()) {
            return new Check<>(null, Status.LOCAL_PROTECTION_ERROR, "local region lkey 0x"
                    + Integer.toHexString(region.lkey()) + " is not registered with this fabric");
        }
        if (offset > r.length() || length > r.length() - offset) {
            return new Check<>(null, Status.LOCAL_LENGTH_ERROR, "local range [" + offset + ", +" + length
                    + ") outside region of " + r.length() + " bytes");
        }
        if (writesLocal && !r.allows(Access.LOCAL_WRITE)) {
            return new Check<>(null, Status.LOCAL_PROTECTION_ERROR, "local region lkey 0x"
                    + Integer.toHexString(r.lkey()) + " lacks LOCAL_WRITE");
        }
        return new Check<>(r, Status.SUCCESS, null);
    }

    protected final F fabric() {
        return fabric;
    }

    /** Marks the region deregistered; true only the first time, so that the provider deregisters it once. */
    protected final boolean markClosed() {
        return closed.compareAndSet(false, true);
    }

    @Override
    public final MemorySegment segment() {
        return segment;
    }

    @Override
    public final RegisterOptions options() {
        return options;
    }

    // Both supertypes declare address() and length(); MemoryRegion's defaults are the answer.
    @Override
    public final long address() {
        return MemoryRegion.super.address();
    }

    @Override
    public final long length() {
        return MemoryRegion.super.length();
    }

    @Override
    public final boolean allows(Access access) {
        return (accessBits & 1 << access.ordinal()) != 0;
    }

    @Override
    public final int lkey() {
        return key;
    }

    @Override
    public final int rkey() {
        return key;
    }
}
