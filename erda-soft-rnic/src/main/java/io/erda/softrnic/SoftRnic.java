package io.erda.softrnic;

import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.locks.ReadWriteLock;
import java.util.concurrent.locks.ReentrantReadWriteLock;
import java.util.function.Supplier;

/**
 * A software RDMA network inside one JVM: every {@link SoftRnicDevice} made here is a port on it with its own
 * LID, and a queue pair reaches its peer by (LID, QP number), as an RC QP is addressed after
 * {@code ibv_modify_qp(RTR)}. Unlike {@link FakeVerbsDevice}, which only records what it is given, these devices
 * execute the work requests they decode (see {@link SoftQueuePair}).
 *
 * <p>Memory safety: a device copies straight into registered memory, so deregistration and QP destruction must
 * never race with a copy into memory that the application then unmaps. Copies run under the read side of
 * {@link #memoryLock()}; {@code ibv_dereg_mr}, {@code ibv_destroy_qp} and device close take the write side, so
 * once they return no copy touches that memory any more.
 */
public final class SoftRnic {
    private static final SoftRnic SHARED = new SoftRnic();

    private final ConcurrentHashMap<Integer, SoftRnicDevice> devicesByLid = new ConcurrentHashMap<>();
    private final AtomicInteger nextLid = new AtomicInteger(1);
    private final ReadWriteLock memoryLock = new ReentrantReadWriteLock();
    /** rdma_cm ports of the network: any address reaches it, so a port alone names a bound id. */
    private final ConcurrentHashMap<Integer, SoftCmId> cmPorts = new ConcurrentHashMap<>();
    private final AtomicInteger nextCmPort = new AtomicInteger(EPHEMERAL_PORTS);
    private static final int EPHEMERAL_PORTS = 49152;

    /** The network that {@code verbs.device=soft} fabrics of this JVM share. */
    public static SoftRnic shared() {
        return SHARED;
    }

    /** A new device (an ibv_context with its own LID) on this network. */
    public SoftRnicDevice newDevice() {
        int lid = nextLid.getAndIncrement();
        SoftRnicDevice device = new SoftRnicDevice(this, lid);
        devicesByLid.put(lid, device);
        return device;
    }

    void detach(SoftRnicDevice device) {
        devicesByLid.remove(device.lid(), device);
    }

    /** The QP at (lid, qpNum), or null if nothing answers there (no such port or QP: the requester times out). */
    SoftQueuePair queuePair(int lid, int qpNum) {
        SoftRnicDevice device = devicesByLid.get(lid);
        return device == null ? null : device.queuePair(qpNum);
    }

    /** Binds {@code port} (0: a free ephemeral one) to {@code id}; -1 if the port is taken. */
    int bindCmPort(int port, SoftCmId id) {
        if (port == 0) {
            int chosen;
            do {
                chosen = nextCmPort.getAndIncrement();
            } while (cmPorts.putIfAbsent(chosen, id) != null);
            return chosen;
        }
        return cmPorts.putIfAbsent(port, id) == null ? port : -1;
    }

    /** A port for an active id's source address, never bound (nothing connects to it). */
    int ephemeralCmPort() {
        return nextCmPort.getAndIncrement();
    }

    SoftCmId cmPort(int port) {
        return cmPorts.get(port);
    }

    void unbindCmPort(int port, SoftCmId id) {
        cmPorts.remove(port, id);
    }

    <T> T withMemory(Supplier<T> copy) {
        memoryLock.readLock().lock();
        try {
            return copy.get();
        } finally {
            memoryLock.readLock().unlock();
        }
    }

    void exclusively(Runnable change) {
        memoryLock.writeLock().lock();
        try {
            change.run();
        } finally {
            memoryLock.writeLock().unlock();
        }
    }
}
