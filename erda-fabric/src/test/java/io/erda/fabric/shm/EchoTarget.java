package io.erda.fabric.shm;

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
import io.erda.fabric.WorkRequest;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * A target process for {@link ShmCrossProcessTest}: registers a file-backed region, listens on {@code shm:///dir},
 * prints {@code READY <address> <rkey>}, accepts one connection and echoes every SEND back, until a message
 * "stall" makes it stop posting receives (so the peer's next SEND stays outstanding).
 */
public final class EchoTarget {
    /** Fabric properties: the poller sleeps until a doorbell or EOF, never on a timer. */
    static final Map<String, String> DOORBELLS_ONLY = Map.of("pollerSleepMillis", "0");

    private EchoTarget() {
    }

    public static void main(String[] args) throws Exception {
        Path dir = Path.of(args[0]);
        Path file = Path.of(args[1]);
        Arena arena = Arena.ofShared();
        MemorySegment pm;
        try (FileChannel ch = FileChannel.open(file, StandardOpenOption.CREATE, StandardOpenOption.READ, StandardOpenOption.WRITE)) {
            ch.truncate(4096);
            pm = ch.map(FileChannel.MapMode.READ_WRITE, 0, 4096, arena);
        }
        Fabric fabric = Fabric.open(ShmFabric.uriOf(dir), DOORBELLS_ONLY);
        MemoryRegion region = fabric.register(pm, RegisterOptions.of(Access.all()).withBacking(new Backing(file, 0)));
        MemoryRegion buffers = fabric.registerLocal(arena.allocate(4096));
        Listener listener = fabric.listen(ShmFabric.uriOf(dir));
        System.out.println("READY " + region.address() + " " + region.rkey());
        System.out.flush();
        ConnectionRequest request = listener.accept(60, TimeUnit.SECONDS);
        Endpoint endpoint = fabric.createEndpoint();
        endpoint.postRecv(new RecvRequest(0, buffers, 0, 1024));
        request.accept(endpoint, "echo".getBytes(StandardCharsets.UTF_8));
        long id = 1;
        while (true) {
            Completion c = endpoint.recvQueue().take(60, TimeUnit.SECONDS);
            if (c == null || !c.isSuccess()) {
                return;
            }
            String text = new String(buffers.segment().asSlice(0, c.byteLength()).toArray(java.lang.foreign.ValueLayout.JAVA_BYTE),
                    StandardCharsets.UTF_8);
            if (text.equals("stall")) {
                Thread.sleep(Long.MAX_VALUE);
            }
            MemorySegment.copy(buffers.segment(), 0, buffers.segment(), 2048, c.byteLength());
            endpoint.postRecv(new RecvRequest(id++, buffers, 0, 1024));
            endpoint.post(WorkRequest.send(id++, buffers, 2048, c.byteLength()));
        }
    }
}
