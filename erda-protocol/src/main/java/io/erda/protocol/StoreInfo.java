package io.erda.protocol;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;

import static io.erda.protocol.MessageHeader.INT;
import static io.erda.protocol.MessageHeader.LONG;
import static io.erda.protocol.MessageHeader.SHORT;

/**
 * Body of {@link MessageType#HELLO_REPLY}: everything a client needs to read and write the store one-sided.
 *
 * <pre>
 *  0  persistence method (u8) | protocol (u8) | head count (u16) | neighbourhood H (u16) | stripe buckets (u16)
 *  8  table buckets, overflow included (u64)
 * 16  region size (u64)
 * 24  segment size (u64)
 * 32  lease (ns, u64)
 * 40  max key length (u32) | max value length (u32)
 * 48  max message length (u32) | PM configuration (u8: 0 none, else 1 + index in Table 1) | put mode (u8: 0 reserve,
 *     1 one-sided; {@link PutMode}) | reserved (u16)
 * 56  table bucket array: region descriptor (24 bytes)
 * 80  stripe version words: region descriptor (24 bytes)
 * 104 head array ...
 * </pre>
 *
 * @param configuration    the server's PM configuration of the taxonomy (its persistence domain, DDIO, receive
 *                         buffers), the one its power-failure emulation follows; null when none is reported
 * @param putMode          how the server's Erda connections publish updates of existing keys
 * @param protocol         0 Erda, 1 Redo Logging, 2 Read After Write: what this server speaks
 * @param maxMessageLength size of the server's posted receive buffers: no request may be longer
 */
public record StoreInfo(PersistenceMethod persistence, PmConfiguration configuration, PutMode putMode, int protocol, int headCount, int neighbourhood, int stripeBuckets,
                        long tableBuckets, long regionSize, long segmentSize, long leaseNanos, int maxKeyLength,
                        int maxValueLength, int maxMessageLength, RegionDescriptor table, RegionDescriptor stripes,
                        HeadArray heads) {
    public static final int FIXED_LENGTH = 104;

    /** The same store as seen by a connection of another protocol, with that protocol's message and value limits. */
    public StoreInfo forProtocol(int newProtocol, int newMaxValueLength, int newMaxMessageLength) {
        return new StoreInfo(persistence, configuration, putMode, newProtocol, headCount, neighbourhood, stripeBuckets, tableBuckets, regionSize,
                segmentSize, leaseNanos, maxKeyLength, newMaxValueLength, newMaxMessageLength, table, stripes, heads);
    }

    public int encodedLength() {
        return FIXED_LENGTH + heads.encodedLength();
    }

    public int encode(MemorySegment s, long offset) {
        s.set(ValueLayout.JAVA_BYTE, offset, (byte) persistence.ordinal());
        s.set(ValueLayout.JAVA_BYTE, offset + 1, (byte) protocol);
        s.set(SHORT, offset + 2, (short) headCount);
        s.set(SHORT, offset + 4, (short) neighbourhood);
        s.set(SHORT, offset + 6, (short) stripeBuckets);
        s.set(LONG, offset + 8, tableBuckets);
        s.set(LONG, offset + 16, regionSize);
        s.set(LONG, offset + 24, segmentSize);
        s.set(LONG, offset + 32, leaseNanos);
        s.set(INT, offset + 40, maxKeyLength);
        s.set(INT, offset + 44, maxValueLength);
        s.set(INT, offset + 48, maxMessageLength);
        s.set(INT, offset + 52, 0);
        s.set(ValueLayout.JAVA_BYTE, offset + 52, (byte) (configuration == null ? 0 : configuration.code()));
        s.set(ValueLayout.JAVA_BYTE, offset + 53, (byte) putMode.ordinal());
        table.encode(s, offset + 56);
        stripes.encode(s, offset + 80);
        return FIXED_LENGTH + heads.encode(s, offset + FIXED_LENGTH);
    }

    public static StoreInfo decode(MemorySegment s, long offset, int bodyLength) {
        Body.require("HELLO_REPLY", FIXED_LENGTH, bodyLength);
        return new StoreInfo(PersistenceMethod.ofCode(s.get(ValueLayout.JAVA_BYTE, offset)),
                PmConfiguration.ofCode(s.get(ValueLayout.JAVA_BYTE, offset + 52) & 0xFF),
                PutMode.ofCode(s.get(ValueLayout.JAVA_BYTE, offset + 53) & 0xFF),
                s.get(ValueLayout.JAVA_BYTE, offset + 1), s.get(SHORT, offset + 2) & 0xFFFF,
                s.get(SHORT, offset + 4) & 0xFFFF, s.get(SHORT, offset + 6) & 0xFFFF, s.get(LONG, offset + 8),
                s.get(LONG, offset + 16), s.get(LONG, offset + 24), s.get(LONG, offset + 32), s.get(INT, offset + 40),
                s.get(INT, offset + 44), s.get(INT, offset + 48), RegionDescriptor.decode(s, offset + 56),
                RegionDescriptor.decode(s, offset + 80),
                HeadArray.decode(s, offset + FIXED_LENGTH, bodyLength - FIXED_LENGTH));
    }
}
