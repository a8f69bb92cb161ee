package io.erda.fabric.verbs;

import io.erda.fabric.MemoryRegion;
import io.erda.fabric.RegisterOptions;
import io.erda.ffm.verbs.MemoryRegistration;
import java.lang.foreign.MemorySegment;
import java.util.concurrent.atomic.AtomicBoolean;

/** An {@code ibv_mr} of a {@link VerbsFabric}. */
final class VerbsMemoryRegion implements MemoryRegion {
    private final VerbsFabric fabric;
    private final MemoryRegistration registration;
    private final RegisterOptions options;
    private final int lkey;
    private final int rkey;
    private final AtomicBoolean closed = new AtomicBoolean();

    VerbsMemoryRegion(VerbsFabric fabric, MemoryRegistration registration, RegisterOptions options) {
        this.fabric = fabric;
        this.registration = registration;
        this.options = options;
        this.lkey = registration.lkey();
        this.rkey = registration.rkey();
    }

    @Override
    public MemorySegment segment() {
        return registration.memory();
    }

    @Override
    public RegisterOptions options() {
        return options;
    }

    @Override
    public int lkey() {
        return lkey;
    }

    @Override
    public int rkey() {
        return rkey;
    }

    /**
     * Always 0: peers' WRITEs and atomics are placed by the RNIC without this process seeing them. The store
     * accounts NVM bytes written from its reservations on this provider.
     */
    @Override
    public long remoteBytesWritten() {
        return 0;
    }

    @Override
    public void close() {
        if (closed.compareAndSet(false, true)) {
            fabric.forget(this);
            registration.close();
        }
    }
}
