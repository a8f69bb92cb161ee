package io.erda.ffm.verbs;

import java.lang.foreign.MemorySegment;

/** {@code struct ibv_comp_channel *}: blocking wait for CQ events instead of busy polling. */
public final class CompletionChannel implements AutoCloseable {
    private final VerbsLibrary verbs;
    private final MemorySegment channel;

    CompletionChannel(VerbsLibrary verbs, MemorySegment channel) {
        this.verbs = verbs;
        this.channel = channel;
    }

    public MemorySegment segment() {
        return channel;
    }

    /** The file descriptor to poll(2)/epoll on. */
    public int fd() {
        return (int) Verbs.ibv_comp_channel$fd.get(channel, 0L);
    }

    /** Blocks until a CQ armed with {@link IbvCompletionQueue#requestNotify} has an event; returns it. */
    public MemorySegment awaitEvent() {
        return verbs.getCqEvent(channel);
    }

    @Override
    public void close() {
        verbs.destroyCompChannel(channel);
    }
}
