package io.erda.fabric.tcp.wire;

import java.io.IOException;
import java.net.StandardSocketOptions;
import java.nio.ByteBuffer;
import java.nio.channels.SocketChannel;
import java.nio.charset.StandardCharsets;

/**
 * One socket of a connection in blocking mode, with the whole-buffer reads and writes the frames need. Payloads
 * move between the socket and registered memory through {@code MemorySegment.asByteBuffer()} views, without an
 * intermediate copy. It remembers when it last received bytes ({@link #lastReceivedNanos()}), which is how the tcp
 * provider tells a live peer from a dead, hung or cut-off one.
 */
public final class FrameChannel implements AutoCloseable {
    private final SocketChannel channel;
    private final ByteBuffer[] gather = new ByteBuffer[2];
    private ByteBuffer drain;
    private volatile long lastReceivedNanos = System.nanoTime();

    public FrameChannel(SocketChannel channel) throws IOException {
        this.channel = channel;
        channel.configureBlocking(true);
        channel.setOption(StandardSocketOptions.TCP_NODELAY, true);
    }

    /** {@link System#nanoTime()} when bytes last arrived (at construction before any did). */
    public long lastReceivedNanos() {
        return lastReceivedNanos;
    }

    /** Reads the next frame header into {@code header} (blocking); see {@link FrameHeader#readFrom}. */
    public FrameHeader readHeader(FrameHeader header) throws IOException {
        header.readFrom(channel);
        lastReceivedNanos = System.nanoTime();
        return header;
    }

    public SocketChannel socket() {
        return channel;
    }

    /**
     * Writes the header and then {@code payload} (may be null); the caller serialises writers.
     *
     * <p>An interrupt pending on the calling thread does not close the socket: a socket channel closes when a thread
     * with its interrupt set writes to it, and the connection is shared (a server worker's replies to many requests,
     * a client's threads). The JVM itself leaves a thread interrupted now and then (closing a shared arena while the
     * thread reads a segment of it), and a server worker's next reply then reset its client's connection. The
     * interrupt stays set for the caller; one that arrives while the write blocks still closes the socket.
     */
    public void write(FrameHeader header, ByteBuffer payload) throws IOException {
        boolean interrupted = Thread.interrupted();
        try {
            writeFrame(header, payload);
        } finally {
            if (interrupted) {
                Thread.currentThread().interrupt();
            }
        }
    }

    private void writeFrame(FrameHeader header, ByteBuffer payload) throws IOException {
        ByteBuffer h = header.buffer().clear();
        if (payload == null || !payload.hasRemaining()) {
            while (h.hasRemaining()) {
                channel.write(h);
            }
            return;
        }
        gather[0] = h;
        gather[1] = payload;
        try {
            while (payload.hasRemaining()) {
                channel.write(gather);
            }
        } finally {
            gather[1] = null;
        }
    }

    public void readFully(ByteBuffer into) throws IOException {
        while (into.hasRemaining()) {
            if (channel.read(into) < 0) {
                throw new ProtocolViolation("end of stream with " + into.remaining() + " payload bytes missing");
            }
            lastReceivedNanos = System.nanoTime(); // a large payload on a slow link is progress too
        }
    }

    /** Reads and discards {@code n} bytes (the payload of a refused request). */
    public void skip(long n) throws IOException {
        if (drain == null) {
            drain = ByteBuffer.allocateDirect(64 * 1024);
        }
        while (n > 0) {
            drain.clear().limit((int) Math.min(n, drain.capacity()));
            readFully(drain);
            n -= drain.limit();
        }
    }

    public String readText(int n) throws IOException {
        ByteBuffer b = ByteBuffer.allocate(n);
        readFully(b);
        return new String(b.array(), StandardCharsets.UTF_8);
    }

    public byte[] readBytes(int n) throws IOException {
        ByteBuffer b = ByteBuffer.allocate(n);
        readFully(b);
        return b.array();
    }

    /** Text for a frame payload, cut to {@link FrameHeader#MAX_TEXT} bytes. */
    public static ByteBuffer text(String s) {
        byte[] b = (s == null ? "" : s).getBytes(StandardCharsets.UTF_8);
        return ByteBuffer.wrap(b, 0, Math.min(b.length, FrameHeader.MAX_TEXT));
    }

    /** Breaks the connection at once: RST instead of FIN, so the peer notices even with data in flight. */
    public void abort() {
        try {
            channel.setOption(StandardSocketOptions.SO_LINGER, 0);
        } catch (IOException | RuntimeException ignored) {
            // already closed
        }
        close();
    }

    /** Sends FIN after what was written; reads continue until the peer closes. */
    public void shutdownOutput() {
        try {
            channel.shutdownOutput();
        } catch (IOException | RuntimeException ignored) {
            // already closed or reset: nothing left to tell the peer
        }
    }

    @Override
    public void close() {
        try {
            channel.close();
        } catch (IOException ignored) {
            // closing a broken socket
        }
    }
}
