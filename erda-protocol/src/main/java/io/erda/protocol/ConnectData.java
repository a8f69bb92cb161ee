package io.erda.protocol;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteOrder;

/**
 * Private data of a connection request (client to server): which protocol the client speaks on this connection.
 * Fits the fabric's 56-byte private-data limit. The server answers with the same layout, {@code protocol} echoed.
 *
 * <pre>
 * +---------------------------------------------------------------+
 * |                        magic "ERDA"                           |
 * +---------------+---------------+-------------------------------+
 * |    version    |   protocol    |        reserved (zero)        |
 * +---------------+---------------+-------------------------------+
 * </pre>
 */
public record ConnectData(int protocol) {
    public static final int MAGIC = 0x41445245; // "ERDA" little-endian
    public static final int LENGTH = 8;
    public static final int PROTOCOL_ERDA = 0;
    public static final int PROTOCOL_REDO_LOG = 1;
    public static final int PROTOCOL_READ_AFTER_WRITE = 2;
    /** RDMP-KV's PMEM-oblivious baseline: the value travels in the request and the server stages it into PM. */
    public static final int PROTOCOL_HERD = 3;
    /** RDMP-KV's server-assisted protocol: metadata reply, client WRITE, server flush and flags. */
    public static final int PROTOCOL_RDMP_SA = 4;
    /** RDMP-KV's client-centric protocol: metadata reply, client WRITE, one-sided flush and flags. */
    public static final int PROTOCOL_RDMP_CC = 5;

    private static final ValueLayout.OfInt INT = ValueLayout.JAVA_INT_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);

    public byte[] encode() {
        byte[] b = new byte[LENGTH];
        MemorySegment s = MemorySegment.ofArray(b);
        s.set(INT, 0, MAGIC);
        s.set(ValueLayout.JAVA_BYTE, 4, MessageHeader.VERSION);
        s.set(ValueLayout.JAVA_BYTE, 5, (byte) protocol);
        return b;
    }

    public static ConnectData decode(byte[] data) {
        if (data == null || data.length < LENGTH) {
            throw new WireFormatException("connect data of " + (data == null ? 0 : data.length) + " bytes, expected " + LENGTH);
        }
        MemorySegment s = MemorySegment.ofArray(data);
        int magic = s.get(INT, 0);
        if (magic != MAGIC) {
            throw new WireFormatException("connect magic 0x" + Integer.toHexString(magic) + " is not 0x" + Integer.toHexString(MAGIC));
        }
        byte version = s.get(ValueLayout.JAVA_BYTE, 4);
        if (version != MessageHeader.VERSION) {
            throw new WireFormatException("client protocol version " + version + " is not " + MessageHeader.VERSION);
        }
        int protocol = s.get(ValueLayout.JAVA_BYTE, 5);
        if (protocol < PROTOCOL_ERDA || protocol > PROTOCOL_RDMP_CC) {
            throw new WireFormatException("protocol " + protocol + " is not 0 (erda), 1 (redo-log), 2 (read-after-write),"
                    + " 3 (herd), 4 (rdmp-sa) or 5 (rdmp-cc)");
        }
        return new ConnectData(protocol);
    }
}
