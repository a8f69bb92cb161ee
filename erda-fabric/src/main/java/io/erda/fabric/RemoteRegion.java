package io.erda.fabric;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteOrder;

/**
 * What a peer needs to address a registered region one-sided: base address, length and rkey,
 * as exchanged out of band in every RDMA application. Addresses are the target's virtual addresses
 * (as with verbs), so a region descriptor stays valid for the lifetime of the registration.
 *
 * <pre>
 *  0                   1                   2                   3
 *  0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1
 * +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
 * |                       address (64 bits)                       |
 * +---------------------------------------------------------------+
 * |                       length  (64 bits)                       |
 * +---------------------------------------------------------------+
 * |                             rkey                              |
 * +---------------------------------------------------------------+
 * |                        reserved (zero)                        |
 * +---------------------------------------------------------------+
 * </pre>
 * Little-endian on the wire.
 */
public record RemoteRegion(long address, long length, int rkey) {

    public static final int ADDRESS_OFFSET = 0;
    public static final int LENGTH_OFFSET = 8;
    public static final int RKEY_OFFSET = 16;
    public static final int ENCODED_LENGTH = 24;

    private static final ValueLayout.OfLong LONG = ValueLayout.JAVA_LONG_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);
    private static final ValueLayout.OfInt INT = ValueLayout.JAVA_INT_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);

    public RemoteRegion {
        if (length < 0) {
            throw new IllegalArgumentException("region length " + length + " is negative");
        }
    }

    /** True if [addr, addr + len) lies inside this region (overflow-safe). */
    public boolean contains(long addr, long len) {
        return len >= 0 && addr - address >= 0 && addr - address <= length && len <= length - (addr - address);
    }

    /** The address {@code offset} bytes into the region. */
    public long addressAt(long offset) {
        if (offset < 0 || offset > length) {
            throw new IndexOutOfBoundsException("offset " + offset + " outside region of length " + length);
        }
        return address + offset;
    }

    public void encode(MemorySegment target, long offset) {
        target.set(LONG, offset + ADDRESS_OFFSET, address);
        target.set(LONG, offset + LENGTH_OFFSET, length);
        target.set(INT, offset + RKEY_OFFSET, rkey);
        target.set(INT, offset + RKEY_OFFSET + 4, 0);
    }

    public static RemoteRegion decode(MemorySegment source, long offset) {
        return new RemoteRegion(source.get(LONG, offset + ADDRESS_OFFSET), source.get(LONG, offset + LENGTH_OFFSET),
                source.get(INT, offset + RKEY_OFFSET));
    }

    @Override
    public String toString() {
        return "RemoteRegion[address=0x" + Long.toHexString(address) + ", length=" + length + ", rkey=0x"
                + Integer.toHexString(rkey) + "]";
    }
}
