package io.erda.protocol.memory;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;

/**
 * Reusable view of one object in any segment: a server's mapped log or a client's copy of bytes it
 * READ remotely. Call {@link #validate} before trusting any getter: on unchecked bytes the getters
 * return whatever is there.
 */
public final class ObjectFlyweight {
    private MemorySegment segment;
    private long offset;

    public ObjectFlyweight wrap(MemorySegment segment, long offset) {
        this.segment = segment;
        this.offset = offset;
        return this;
    }

    public long offset() {
        return offset;
    }

    /** See {@link ObjectLayout#validate}; {@code expectedKey} null accepts any key. */
    public ObjectCheck validate(long available, MemorySegment expectedKey) {
        return ObjectLayout.validate(segment, offset, available, expectedKey);
    }

    public boolean isTombstone() {
        return segment.get(ValueLayout.JAVA_BYTE, offset + ObjectLayout.TYPE_OFFSET) == ObjectLayout.TYPE_TOMBSTONE;
    }

    public int keyLength() {
        return Short.toUnsignedInt(segment.get(Words.SHORT_U, offset + ObjectLayout.KEY_LENGTH_OFFSET));
    }

    public int valueLength() {
        return segment.get(Words.INT_U, offset + ObjectLayout.VALUE_LENGTH_OFFSET);
    }

    public int crc() {
        return segment.get(Words.INT_U, offset + ObjectLayout.CRC_OFFSET);
    }

    /** Padded length according to the header (only meaningful once validated). */
    public long totalLength() {
        return ObjectLayout.align(ObjectLayout.HEADER_LENGTH + (long) keyLength() + valueLength());
    }

    public MemorySegment key() {
        return segment.asSlice(offset + ObjectLayout.HEADER_LENGTH, keyLength());
    }

    public MemorySegment value() {
        return segment.asSlice(offset + ObjectLayout.HEADER_LENGTH + keyLength(), valueLength());
    }
}
