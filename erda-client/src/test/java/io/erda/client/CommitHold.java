package io.erda.client;

import io.erda.fabric.FaultInjectingEndpoint;
import io.erda.fabric.Opcode;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * Holds an RDMP-SA or RDMP-CC PUT between its value's WRITE and its commit, through the client's endpoints
 * ({@link FaultInjectingEndpoint#beforeNext}): the action runs just before the first request posted after a WRITE,
 * which is RDMP-CC's FLUSH of the value (a READ where the device has no FLUSH) and RDMP-SA's RDMP_COMMIT SEND. The
 * value is then in the object and no flag is set. An action that throws stops the PUT there.
 */
final class CommitHold {
    private final List<FaultInjectingEndpoint> endpoints = new CopyOnWriteArrayList<>();

    /** {@code options} with every endpoint the client makes wrapped, so that {@link #next} can reach it. */
    ClientOptions decorate(ClientOptions options) {
        return options.withEndpointDecorator(e -> {
            FaultInjectingEndpoint f = new FaultInjectingEndpoint(e);
            endpoints.add(f);
            return f;
        });
    }

    /** The next PUT through any of the client's connections runs {@code action} at its commit step; once. */
    void next(Runnable action) {
        AtomicBoolean ran = new AtomicBoolean();
        for (FaultInjectingEndpoint f : endpoints) {
            AtomicBoolean wrote = new AtomicBoolean();
            f.beforeNext(wr -> {
                if (wr.opcode() == Opcode.WRITE) {
                    wrote.set(true);
                    return false;
                }
                return wrote.get();
            }, () -> {
                if (ran.compareAndSet(false, true)) {
                    action.run();
                }
            });
        }
    }
}
