package io.erda.protocol;

import java.lang.foreign.MemorySegment;

import static io.erda.protocol.MessageHeader.INT;
import static io.erda.protocol.MessageHeader.LONG;

/**
 * A remotely accessible region as the wire carries it: base address, length, rkey (the same 24-byte encoding as
 * the fabric's RemoteRegion; core does not depend on the fabric).
 */
public record RegionDescriptor(long address, long length, int rkey) {
    public static final int ADDRESS_OFFSET = 0;
    public static final int LENGTH_OFFSET = 8;
    public static final int RKEY_OFFSET = 16;
    public static final int LENGTH = 24;

    public int encode(MemorySegment s, long offset) {
        s.set(LONG, offset + ADDRESS_OFFSET, address);
        s.set(LONG, offset + LENGTH_OFFSET, length);
        s.set(INT, offset + RKEY_OFFSET, rkey);
        s.set(INT, offset + RKEY_OFFSET + 4, 0);
        return LENGTH;
    }

    public static RegionDescriptor decode(MemorySegment s, long offset) {
        return new RegionDescriptor(s.get(LONG, offset + ADDRESS_OFFSET), s.get(LONG, offset + LENGTH_OFFSET),
                s.get(INT, offset + RKEY_OFFSET));
    }

    /** True if [addr, addr + len) lies inside (overflow-safe). */
    public boolean contains(long addr, long len) {
        long off = addr - address;
        return len >= 0 && off >= 0 && off <= length && len <= length - off;
    }
}
