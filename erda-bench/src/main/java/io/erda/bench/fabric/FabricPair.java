package io.erda.bench.fabric;

import io.erda.fabric.Access;
import io.erda.fabric.Backing;
import io.erda.fabric.Completion;
import io.erda.fabric.ConnectionRequest;
import io.erda.fabric.Endpoint;
import io.erda.fabric.Fabric;
import io.erda.fabric.Listener;
import io.erda.fabric.MemoryRegion;
import io.erda.fabric.RecvRequest;
import io.erda.fabric.RegisterOptions;
import io.erda.fabric.SyncEndpoint;
import io.erda.fabric.WorkRequest;
import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.net.URI;
import java.nio.channels.FileChannel;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Consumer;

/**
 * A target and an initiator fabric instance of one provider in this process, connected over the provider's real
 * transport, with a 1 MiB file-backed region on the target: the fixture of {@link FabricBench}, and of benchmarks
 * that put a store's latency next to the fabric's round trips in the same run (store-bench {@code --latency-check}).
 * Everything made through it is closed with it, last made first.
 */
public final class FabricPair implements AutoCloseable {
    /** Size of {@link #remote()}. */
    public static final int REGION_BYTES = 1 << 20;

    /** One timed operation. */
    public interface Operation {
        void run() throws Exception;
    }

    private final Arena arena = Arena.ofShared();
    /** Closed at the end, last first: endpoints, the echo thread's stop. */
    private final List<AutoCloseable> closeLast = new ArrayList<>();
    private Fabric target;
    private Fabric initiator;
    private Listener listener;
    private MemoryRegion remote;

    private FabricPair() {
    }

    /** Opens both instances of {@code scheme} and the target's region (a file in {@code work}). */
    public static FabricPair open(String scheme, Path work) throws IOException {
        FabricPair pair = new FabricPair();
        try {
            URI uri = listenUri(scheme, work);
            pair.target = Fabric.open(uri);
            pair.initiator = Fabric.open(uri);
            pair.listener = pair.target.listen(uri);
            pair.remote = pair.targetRegion(work.resolve("region.pm"));
            return pair;
        } catch (IOException | RuntimeException e) {
            try {
                pair.close();
            } catch (Exception suppressed) {
                e.addSuppressed(suppressed);
            }
            throw e;
        }
    }

    private static URI listenUri(String scheme, Path work) {
        return switch (scheme) {
            case "tcp" -> URI.create("tcp://127.0.0.1:0");
            case "shm" -> URI.create("shm://" + work.toAbsolutePath());
            default -> URI.create(scheme + "://127.0.0.1:0");
        };
    }

    public Fabric target() {
        return target;
    }

    public Fabric initiator() {
        return initiator;
    }

    /** The target's region: REMOTE_READ, REMOTE_WRITE and atomics, {@link #REGION_BYTES} long. */
    public MemoryRegion remote() {
        return remote;
    }

    /** Initiator memory, registered, valid until close. */
    public MemoryRegion local(long bytes) {
        return initiator.registerLocal(arena.allocate(bytes, 64));
    }

    /** A synchronous initiator endpoint connected to the target, closed with this pair. */
    public SyncEndpoint syncEndpoint() throws Exception {
        SyncEndpoint e = new SyncEndpoint(connect(null)[0]);
        closeLast.add(e);
        return e;
    }

    /** One 64-byte READ of the target's region: the fabric's one-sided round trip. */
    public Operation read64() throws Exception {
        SyncEndpoint one = syncEndpoint();
        MemoryRegion local = local(64);
        long at = remote.address();
        int rkey = remote.rkey();
        return () -> one.read(local, 0, 64, at, rkey);
    }

    private MemoryRegion targetRegion(Path file) throws IOException {
        MemorySegment segment;
        try (FileChannel ch = FileChannel.open(file, StandardOpenOption.CREATE, StandardOpenOption.READ, StandardOpenOption.WRITE)) {
            ch.truncate(REGION_BYTES);
            segment = ch.map(FileChannel.MapMode.READ_WRITE, 0, REGION_BYTES, arena);
        }
        return target.register(segment, RegisterOptions.of(Access.all()).withBacking(new Backing(file, 0)));
    }

    /** {initiator side, target side}; {@code beforeAccept} may post the target's receives. */
    public Endpoint[] connect(Consumer<Endpoint> beforeAccept) throws Exception {
        Endpoint client = initiator.createEndpoint();
        Thread connector = Thread.ofPlatform().start(() -> client.connect(listener.uri(), new byte[0]));
        ConnectionRequest request = listener.accept(10, TimeUnit.SECONDS);
        if (request == null) {
            throw new IllegalStateException("no connection request within 10 s on " + listener.uri());
        }
        Endpoint server = target.createEndpoint();
        if (beforeAccept != null) {
            beforeAccept.accept(server);
        }
        request.accept(server, new byte[0]);
        connector.join();
        return new Endpoint[] {client, server};
    }

    /**
     * A SEND/RECV ping-pong of {@code size} bytes against an echo thread on the target side, which runs until this
     * pair closes: the fabric's two-sided round trip. One thread at a time.
     */
    public Operation pingPong(int size) throws Exception {
        int depth = 16;
        MemoryRegion serverBuf = target.registerLocal(arena.allocate((long) size * depth, 64));
        Endpoint[] pair = connect(server -> {
            for (int i = 0; i < depth; i++) {
                server.postRecv(new RecvRequest(i, serverBuf, (long) i * size, size));
            }
        });
        AtomicBoolean stop = new AtomicBoolean();
        Thread echo = Thread.ofPlatform().name("echo").start(() -> {
            try (SyncEndpoint reply = new SyncEndpoint(pair[1])) {
                while (!stop.get()) {
                    Completion c = pair[1].recvQueue().take(50, TimeUnit.MILLISECONDS);
                    if (c == null || !c.isSuccess()) {
                        continue;
                    }
                    long off = c.wrId() * size;
                    reply.send(serverBuf, off, c.byteLength());
                    pair[1].postRecv(new RecvRequest(c.wrId(), serverBuf, off, size));
                }
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        });
        closeLast.add(() -> {
            stop.set(true);
            echo.join();
            pair[0].close();
            pair[1].close();
        });
        MemoryRegion clientBuf = local(2L * size);
        long[] ids = {0};
        // the SEND is signalled and its completion taken after the echo: a sender must learn that its message was
        // placed (its send queue fills otherwise), as every request-reply client does
        return () -> {
            pair[0].postRecv(new RecvRequest(++ids[0], clientBuf, size, size));
            pair[0].post(WorkRequest.send(ids[0], clientBuf, 0, size));
            Completion c = pair[0].recvQueue().take(10, TimeUnit.SECONDS);
            if (c == null || !c.isSuccess()) {
                throw new IllegalStateException("echo failed: " + c);
            }
            Completion sent = pair[0].sendQueue().take(10, TimeUnit.SECONDS);
            if (sent == null || !sent.isSuccess()) {
                throw new IllegalStateException("SEND failed: " + sent);
            }
        };
    }

    @Override
    public void close() throws Exception {
        Exception first = null;
        for (int i = closeLast.size() - 1; i >= 0; i--) {
            try {
                closeLast.get(i).close();
            } catch (Exception e) {
                first = first == null ? e : first;
            }
        }
        for (AutoCloseable c : new AutoCloseable[] {listener, initiator, target}) {
            if (c != null) {
                c.close();
            }
        }
        arena.close();
        if (first != null) {
            throw first;
        }
    }
}
