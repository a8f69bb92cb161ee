package io.erda.ffm.verbs;

import java.io.EOFException;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.channels.SocketChannel;

/**
 * The TCP side channel that replaces rdma_cm where it is unavailable: each side writes its
 * {@link QpInfo}, then reads the peer's (symmetric, so either side may start).
 *
 * <p>Wire format, big-endian, one message per direction:
 * <pre>
 *  0               4       6       8               12              16
 *  +---------------+-------+-------+---------------+---------------+
 *  | magic "EQPI"  | ver=1 |  lid  |    qp_num     |  psn (24 bit) |
 *  +---------------+-------+-------+---------------+---------------+
 *  | gid (16 bytes, raw as in union ibv_gid)                       |  16..31
 *  +---------------+-----------------------------------------------+
 *  | private_len   | private data (private_len bytes, <= 4096)  ...   32..
 *  +---------------+----------------
 * </pre>
 */
public final class QpInfoExchange {
    private QpInfoExchange() {}

    public static final int MAGIC = 0x45515049; // "EQPI"
    public static final short VERSION = 1;
    public static final int HEADER_LENGTH = 36;

    public static ByteBuffer encode(QpInfo info) {
        byte[] priv = info.privateData();
        ByteBuffer b = ByteBuffer.allocate(HEADER_LENGTH + priv.length).order(ByteOrder.BIG_ENDIAN);
        b.putInt(MAGIC).putShort(VERSION).putShort((short) info.lid()).putInt(info.qpNum()).putInt(info.psn())
                .put(info.gid()).putInt(priv.length).put(priv);
        return b.flip();
    }

    /** Decodes a header (exactly {@link #HEADER_LENGTH} bytes) and returns the private data length. */
    static int privateLength(ByteBuffer header) throws IOException {
        int magic = header.getInt(0);
        short version = header.getShort(4);
        if (magic != MAGIC) {
            throw new IOException("not a QP info message: magic 0x" + Integer.toHexString(magic) + ", expected 0x"
                    + Integer.toHexString(MAGIC));
        }
        if (version != VERSION) {
            throw new IOException("QP info version " + version + ", expected " + VERSION);
        }
        int length = header.getInt(32);
        if (length < 0 || length > QpInfo.MAX_PRIVATE_DATA) {
            throw new IOException("QP info private data of " + length + " bytes, limit " + QpInfo.MAX_PRIVATE_DATA);
        }
        return length;
    }

    public static QpInfo decode(ByteBuffer message) throws IOException {
        ByteBuffer b = message.duplicate().order(ByteOrder.BIG_ENDIAN);
        if (b.remaining() < HEADER_LENGTH) {
            throw new IOException("QP info message of " + b.remaining() + " bytes, header needs " + HEADER_LENGTH);
        }
        ByteBuffer header = b.slice(b.position(), HEADER_LENGTH).order(ByteOrder.BIG_ENDIAN);
        int length = privateLength(header);
        if (b.remaining() != HEADER_LENGTH + length) {
            throw new IOException("QP info message of " + b.remaining() + " bytes, expected " + (HEADER_LENGTH + length));
        }
        byte[] gid = new byte[QpInfo.GID_LENGTH];
        header.get(16, gid);
        byte[] priv = new byte[length];
        b.get(b.position() + HEADER_LENGTH, priv);
        return new QpInfo(header.getInt(8), Short.toUnsignedInt(header.getShort(6)), gid, header.getInt(12), priv);
    }

    /** Writes ours, reads theirs over a blocking channel. */
    public static QpInfo exchange(SocketChannel channel, QpInfo local) throws IOException {
        write(channel, local);
        return read(channel);
    }

    /** Writes one message (the listening side answers a request it has {@link #read} first). */
    public static void write(SocketChannel channel, QpInfo info) throws IOException {
        ByteBuffer out = encode(info);
        while (out.hasRemaining()) {
            channel.write(out);
        }
    }

    /** Reads one message from a blocking channel. */
    public static QpInfo read(SocketChannel channel) throws IOException {
        ByteBuffer header = readFully(channel, HEADER_LENGTH);
        ByteBuffer body = readFully(channel, privateLength(header));
        ByteBuffer message = ByteBuffer.allocate(header.capacity() + body.capacity()).put(header.rewind())
                .put(body.rewind()).flip();
        return decode(message);
    }

    private static ByteBuffer readFully(SocketChannel channel, int length) throws IOException {
        ByteBuffer b = ByteBuffer.allocate(length).order(ByteOrder.BIG_ENDIAN);
        while (b.hasRemaining()) {
            if (channel.read(b) < 0) {
                throw new EOFException("peer closed the QP info exchange after " + b.position() + " of " + length
                        + " bytes");
            }
        }
        return b.flip();
    }
}
