package io.erda.fabric.shm;

import io.erda.fabric.FabricException;
import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.net.StandardProtocolFamily;
import java.net.UnixDomainSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.Channels;
import java.nio.channels.FileChannel;
import java.nio.channels.SelectionKey;
import java.nio.channels.Selector;
import java.nio.channels.SocketChannel;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * The plumbing of one established or establishing connection: the Unix-domain socket (handshake, then liveness
 * and doorbells: single bytes that wake the peer's sleeping poller, see {@link RingFile}) and the mapped ring file
 * with its two rings.
 */
final class ShmConnection {
    final SocketChannel socket;
    final DataInputStream in;
    final DataOutputStream out;
    private static final byte[] DOORBELL = {1};
    private final ByteBuffer doorbellBytes = ByteBuffer.allocate(64);
    private Arena ringArena;
    Ring inbound;
    Ring outbound;

    ShmConnection(SocketChannel socket) {
        this.socket = socket;
        this.in = new DataInputStream(Channels.newInputStream(socket));
        this.out = new DataOutputStream(Channels.newOutputStream(socket));
    }

    static ShmConnection open(Path socketPath) {
        try {
            SocketChannel ch = SocketChannel.open(StandardProtocolFamily.UNIX);
            try {
                ch.connect(UnixDomainSocketAddress.of(socketPath));
            } catch (IOException e) {
                ch.close();
                throw e;
            }
            return new ShmConnection(ch);
        } catch (IOException e) {
            throw new FabricException("cannot reach an shm listener at " + socketPath + ": " + e, e);
        }
    }

    /** Maps the ring file; {@code inboundRing} is the ring this side consumes. */
    void mapRings(Path ringFile, int inboundRing) {
        Arena arena = Arena.ofShared();
        try (FileChannel ch = FileChannel.open(ringFile, StandardOpenOption.READ, StandardOpenOption.WRITE)) {
            MemorySegment file = ch.map(FileChannel.MapMode.READ_WRITE, 0, ch.size(), arena);
            int capacity = RingFile.verify(file, ringFile.toString());
            inbound = RingFile.ring(file, inboundRing, capacity);
            outbound = RingFile.ring(file, 1 - inboundRing, capacity);
            ringArena = arena;
        } catch (IOException | RuntimeException e) {
            arena.close();
            throw new FabricException("cannot map shm ring file " + ringFile + ": " + e.getMessage(), e);
        }
    }

    /**
     * Publishes a record into the outbound ring and, if the peer's poller announced it is asleep, rings its
     * doorbell; false if the ring has no room yet (the peer rings ours once it has). Called under the endpoint's
     * lock (single producer).
     */
    boolean publish(int type, long sequence, int imm, long rnrTimeoutNanos, MemorySegment source, long sourceOffset,
                    int payloadLength) {
        if (!outbound.offer(type, sequence, imm, rnrTimeoutNanos, source, sourceOffset, payloadLength)) {
            outbound.announceFull(); // the peer rings us when it frees space: announce, then look once more
            if (!outbound.offer(type, sequence, imm, rnrTimeoutNanos, source, sourceOffset, payloadLength)) {
                return false;
            }
            outbound.cancelFull();
        }
        if (outbound.claimConsumerWakeup()) {
            ringDoorbell();
        }
        return true;
    }

    /** Poller, after it consumed inbound records: wakes the peer if it waits for the space. */
    void spaceFreed() {
        if (inbound.claimProducerWakeup()) {
            ringDoorbell();
        }
    }

    /** One byte on the socket: it wakes the peer's poller out of its selector, in any process. */
    private void ringDoorbell() {
        try {
            socket.write(ByteBuffer.wrap(DOORBELL));
        } catch (IOException e) {
            // the peer is gone: its EOF reaches our poller, which fails the endpoint
        }
    }

    /** After the handshake the socket carries only doorbells and EOF, read by the fabric's poller. */
    void registerWith(Selector selector, Object attachment) throws IOException {
        socket.configureBlocking(false);
        socket.register(selector, SelectionKey.OP_READ, attachment);
    }

    /** Poller: reads the doorbell bytes that woke it and returns how many; -1 at EOF (the peer closed or died). */
    int drainDoorbells() {
        int total = 0;
        try {
            int n;
            do {
                doorbellBytes.clear();
                n = socket.read(doorbellBytes);
                total += Math.max(n, 0);
            } while (n > 0);
            return n < 0 ? -1 : total;
        } catch (IOException e) {
            return -1; // closed locally or reset by the peer: either way the connection is gone
        }
    }

    /** Closes the socket after {@code timeout} unless {@code done} is set first (a stuck handshake fails). */
    void closeUnlessDone(Duration timeout, AtomicBoolean done) {
        Thread.ofVirtual().start(() -> {
            try {
                Thread.sleep(timeout);
            } catch (InterruptedException e) {
                return;
            }
            if (!done.get()) {
                closeSocket();
            }
        });
    }

    void closeSocket() {
        try {
            socket.close();
        } catch (IOException e) {
            // already broken
        }
    }

    /** Unmaps the rings; only when no thread can touch them any more. */
    void unmapRings() {
        if (ringArena != null) {
            ringArena.close();
            ringArena = null;
            inbound = null;
            outbound = null;
        }
    }
}
