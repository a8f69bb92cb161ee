package io.erda.fabric.shm;

import io.erda.fabric.FabricException;
import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.net.StandardProtocolFamily;
import java.net.UnixDomainSocketAddress;
import java.nio.channels.Channels;
import java.nio.channels.FileChannel;
import java.nio.channels.SocketChannel;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * The plumbing of one established or establishing connection: the Unix-domain socket (handshake, then liveness)
 * and the mapped ring file with its two rings.
 */
final class Connection {
    final SocketChannel socket;
    final DataInputStream in;
    final DataOutputStream out;
    private Arena ringArena;
    Ring inbound;
    Ring outbound;

    Connection(SocketChannel socket) {
        this.socket = socket;
        this.in = new DataInputStream(Channels.newInputStream(socket));
        this.out = new DataOutputStream(Channels.newOutputStream(socket));
    }

    static Connection open(Path socketPath) {
        try {
            SocketChannel ch = SocketChannel.open(StandardProtocolFamily.UNIX);
            try {
                ch.connect(UnixDomainSocketAddress.of(socketPath));
            } catch (IOException e) {
                ch.close();
                throw e;
            }
            return new Connection(ch);
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

    /** Runs {@code onEof} (on a virtual thread) when the peer's end of the socket closes. */
    void watchLiveness(Runnable onEof) {
        Thread.ofVirtual().name("erda-shm-liveness").start(() -> {
            try {
                while (in.read() >= 0) {
                    // nothing else travels after the handshake; keep reading until EOF
                }
            } catch (IOException e) {
                // closed locally or reset by the peer: either way the connection is gone
            }
            onEof.run();
        });
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
