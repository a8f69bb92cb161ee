package io.erda.softrnic;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.concurrent.ConcurrentLinkedQueue;

/**
 * A fake {@code struct rdma_event_channel}: its {@code fd} is an {@link EventFd} that is readable while events are
 * queued, and rdma_get_cm_event blocks on it as on the real channel's fd.
 */
final class SoftCmChannel implements AutoCloseable {
    /** An event struct and the arena holding it and its private data, freed by rdma_ack_cm_event. */
    record Event(MemorySegment struct, Arena arena) {}

    final MemorySegment struct;
    private final EventFd fd = new EventFd();
    private final ConcurrentLinkedQueue<Event> events = new ConcurrentLinkedQueue<>();

    SoftCmChannel(MemorySegment struct) {
        this.struct = struct;
    }

    int fd() {
        return fd.fd();
    }

    void add(Event event) {
        events.add(event);
        fd.signal();
    }

    /** Blocks until an event is queued, then takes it. */
    Event take() {
        fd.await();
        return events.poll();
    }

    /** Frees the events nobody took. */
    @Override
    public void close() {
        Event e;
        while ((e = events.poll()) != null) {
            e.arena().close();
        }
        fd.close();
    }
}
