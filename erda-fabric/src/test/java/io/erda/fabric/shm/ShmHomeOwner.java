package io.erda.fabric.shm;

import io.erda.fabric.Access;
import io.erda.fabric.Backing;
import io.erda.fabric.Endpoint;
import io.erda.fabric.Fabric;
import io.erda.fabric.Listener;
import io.erda.fabric.RegisterOptions;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.nio.channels.FileChannel;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;

/**
 * A child process for {@link ShmHomeCleanupTest}. Opens two shm fabrics: {@code a} registers a file-backed region
 * (so its home is {@code /dev/shm/erda-shm-<pid>-<n>}) and listens on {@code work/a}; {@code b} connects to the test's
 * listener on {@code work/b} (so its home is {@code work/b/<pid>-<n>}). Prints {@code HOMES <home a> <home b>}, then,
 * by its first argument: {@code close} closes everything and returns from main, {@code exit} calls
 * {@code System.exit(0)} with everything open, {@code hang} waits to be killed.
 */
public final class ShmHomeOwner {
    private ShmHomeOwner() {
    }

    public static void main(String[] args) throws Exception {
        String mode = args[0];
        Path work = Path.of(args[1]);
        Path file = work.resolve("region-" + ProcessHandle.current().pid());
        Arena arena = Arena.ofShared();
        MemorySegment pm;
        try (FileChannel ch = FileChannel.open(file, StandardOpenOption.CREATE, StandardOpenOption.READ, StandardOpenOption.WRITE)) {
            ch.truncate(4096);
            pm = ch.map(FileChannel.MapMode.READ_WRITE, 0, 4096, arena);
        }
        ShmFabric a = (ShmFabric) Fabric.open(ShmFabric.uriOf(work.resolve("a")));
        a.register(pm, RegisterOptions.of(Access.all()).withBacking(new Backing(file, 0)));
        Listener listener = a.listen(ShmFabric.uriOf(work.resolve("a")));
        ShmFabric b = (ShmFabric) Fabric.open(ShmFabric.uriOf(work.resolve("b")));
        Endpoint endpoint = b.createEndpoint();
        endpoint.connect(ShmFabric.uriOf(work.resolve("b")), new byte[0]);
        System.out.println("HOMES " + a.homeIfCreated() + " " + b.homeIfCreated());
        System.out.flush();
        switch (mode) {
            case "close" -> {
                endpoint.close();
                b.close();
                listener.close();
                a.close();
            }
            case "exit" -> System.exit(0);
            case "hang" -> Thread.sleep(Long.MAX_VALUE);
            default -> throw new IllegalArgumentException("mode " + mode);
        }
    }
}
