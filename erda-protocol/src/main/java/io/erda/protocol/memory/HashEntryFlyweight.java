package io.erda.protocol.memory;

import java.lang.foreign.MemorySegment;

/**
 * Read view of one hash entry in any segment (the server's mapped table or a client's copy of a
 * window). Plain loads: on the client, consistency comes from the window protocol, not from here.
 * Stores are the table's business (ordered release stores, see {@code HopscotchTable}).
 */
public final class HashEntryFlyweight {
    private MemorySegment segment;
    private long offset;

    public HashEntryFlyweight wrap(MemorySegment segment, long offset) {
        this.segment = segment;
        this.offset = offset;
        return this;
    }

    public long atomicWord() {
        return Words.get(segment, offset + HashEntryLayout.ATOMIC_WORD_OFFSET);
    }

    public long meta() {
        return Words.get(segment, offset + HashEntryLayout.META_OFFSET);
    }

    public boolean isValid() {
        return HashEntryLayout.isValid(meta());
    }

    public int fingerprint() {
        return HashEntryLayout.fingerprint(meta());
    }

    public int headId() {
        return HashEntryLayout.headId(meta());
    }

    public int hopDistance() {
        return HashEntryLayout.hopDistance(meta());
    }
}
