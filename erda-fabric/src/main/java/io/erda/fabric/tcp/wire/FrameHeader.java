package io.erda.fabric.tcp.wire;

import java.io.EOFException;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.channels.ReadableByteChannel;

/**
 * The fixed header in front of every frame of the tcp provider, as a flyweight over a reusable direct buffer
 * (one per reading or writing thread, so the hot path allocates nothing for headers).
 *
 * <pre>
 *  0                   1                   2                   3
 *  0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1
 * +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
 * |    opcode     |   reserved    |        status (responses)     |  0
 * +---------------------------------------------------------------+
 * |                 payload length (bytes after header)           |  4
 * +---------------------------------------------------------------+
 * |         sequence (requests/responses) or nonce (handshake)    |  8
 * |                                                               |
 * +---------------------------------------------------------------+
 * |                       remote address                          | 16
 * |                                                               |
 * +---------------------------------------------------------------+
 * |                            rkey                               | 24
 * +---------------------------------------------------------------+
 * |                       immediate data                          | 28
 * +---------------------------------------------------------------+
 * |  compare / add; atomic response: old value; handshake: rnr ns | 32
 * |                                                               |
 * +---------------------------------------------------------------+
 * |                           swap                                | 40
 * |                                                               |
 * +---------------------------------------------------------------+
 * |  operand length (READ/FLUSH bytes asked; response: byte count)| 48
 * +---------------------------------------------------------------+
 * |                       magic 'ERDA'                            | 52
 * +---------------------------------------------------------------+
 * </pre>
 * Little-endian. The magic makes stray bytes (a port scanner, a desynchronised stream) a violation at the first
 * header rather than a plausible request.
 */
public final class FrameHeader {
    public static final int OPCODE_OFFSET = 0;
    public static final int STATUS_OFFSET = 2;
    public static final int PAYLOAD_LENGTH_OFFSET = 4;
    public static final int SEQUENCE_OFFSET = 8;
    public static final int REMOTE_ADDRESS_OFFSET = 16;
    public static final int RKEY_OFFSET = 24;
    public static final int IMM_OFFSET = 28;
    public static final int COMPARE_ADD_OFFSET = 32;
    public static final int SWAP_OFFSET = 40;
    public static final int OPERAND_LENGTH_OFFSET = 48;
    public static final int MAGIC_OFFSET = 52;
    public static final int LENGTH = 56;

    public static final int MAGIC = 0x41445245; // "ERDA" little-endian

    /** Largest data a single READ, WRITE or SEND moves; larger requests fail locally with LOCAL_LENGTH_ERROR. */
    public static final int MAX_PAYLOAD = 16 << 20;
    /** Largest error detail or reject reason. */
    public static final int MAX_TEXT = 1024;

    private final ByteBuffer buffer = ByteBuffer.allocateDirect(LENGTH).order(ByteOrder.LITTLE_ENDIAN);

    public ByteBuffer buffer() {
        return buffer;
    }

    /** Clears the header for a new frame. */
    public FrameHeader reset(byte opcode) {
        for (int i = 0; i < LENGTH; i += 8) {
            buffer.putLong(i, 0);
        }
        buffer.put(OPCODE_OFFSET, opcode);
        buffer.putInt(MAGIC_OFFSET, MAGIC);
        buffer.clear();
        return this;
    }

    public byte opcode() {
        return buffer.get(OPCODE_OFFSET);
    }

    public int status() {
        return Short.toUnsignedInt(buffer.getShort(STATUS_OFFSET));
    }

    public FrameHeader status(int s) {
        buffer.putShort(STATUS_OFFSET, (short) s);
        return this;
    }

    public int payloadLength() {
        return buffer.getInt(PAYLOAD_LENGTH_OFFSET);
    }

    public FrameHeader payloadLength(int n) {
        buffer.putInt(PAYLOAD_LENGTH_OFFSET, n);
        return this;
    }

    public long sequence() {
        return buffer.getLong(SEQUENCE_OFFSET);
    }

    public FrameHeader sequence(long s) {
        buffer.putLong(SEQUENCE_OFFSET, s);
        return this;
    }

    public long remoteAddress() {
        return buffer.getLong(REMOTE_ADDRESS_OFFSET);
    }

    public FrameHeader remoteAddress(long a) {
        buffer.putLong(REMOTE_ADDRESS_OFFSET, a);
        return this;
    }

    public int rkey() {
        return buffer.getInt(RKEY_OFFSET);
    }

    public FrameHeader rkey(int k) {
        buffer.putInt(RKEY_OFFSET, k);
        return this;
    }

    public int imm() {
        return buffer.getInt(IMM_OFFSET);
    }

    public FrameHeader imm(int i) {
        buffer.putInt(IMM_OFFSET, i);
        return this;
    }

    public long compareAdd() {
        return buffer.getLong(COMPARE_ADD_OFFSET);
    }

    public FrameHeader compareAdd(long v) {
        buffer.putLong(COMPARE_ADD_OFFSET, v);
        return this;
    }

    public long swap() {
        return buffer.getLong(SWAP_OFFSET);
    }

    public FrameHeader swap(long v) {
        buffer.putLong(SWAP_OFFSET, v);
        return this;
    }

    public int operandLength() {
        return buffer.getInt(OPERAND_LENGTH_OFFSET);
    }

    public FrameHeader operandLength(int n) {
        buffer.putInt(OPERAND_LENGTH_OFFSET, n);
        return this;
    }

    /**
     * Reads the next header from {@code channel} and checks it: magic, known opcode, lengths within the opcode's
     * limits. Throws {@link EOFException} on a clean end of stream before the first byte.
     */
    public FrameHeader readFrom(ReadableByteChannel channel) throws IOException {
        buffer.clear();
        while (buffer.hasRemaining()) {
            if (channel.read(buffer) < 0) {
                if (buffer.position() == 0) {
                    throw new EOFException("end of stream");
                }
                throw new ProtocolViolation("end of stream after " + buffer.position() + " of " + LENGTH + " header bytes");
            }
        }
        buffer.clear();
        int magic = buffer.getInt(MAGIC_OFFSET);
        if (magic != MAGIC) {
            throw new ProtocolViolation("bad magic 0x" + Integer.toHexString(magic) + ", expected 0x" + Integer.toHexString(MAGIC));
        }
        WireOpcode.check(this);
        return this;
    }

    @Override
    public String toString() {
        return "Frame[" + WireOpcode.name(opcode()) + ", seq=" + sequence() + ", payload=" + payloadLength()
                + ", operand=" + operandLength() + ", status=" + status() + "]";
    }
}
