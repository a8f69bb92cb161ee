package io.erda.client;

import java.nio.file.Path;
import java.util.EnumMap;
import java.util.Map;

/** One server process per fabric for a test class, started on first use, each on its own fresh store directory. */
final class Servers implements AutoCloseable {
    private final String name;
    private final ServerArgs args;
    private final Map<TestFabric, ServerProcess> servers = new EnumMap<>(TestFabric.class);
    private final Map<TestFabric, Path> dirs = new EnumMap<>(TestFabric.class);

    Servers(String name, ServerArgs args) {
        this.name = name;
        this.args = args;
    }

    synchronized ServerProcess get(TestFabric fabric) {
        return servers.computeIfAbsent(fabric, f -> {
            Path dir = ServerProcess.newStoreDir(name + "-" + f.name().toLowerCase());
            dirs.put(f, dir);
            return ServerProcess.start(dir, f, args.toArray());
        });
    }

    @Override
    public synchronized void close() {
        servers.values().forEach(ServerProcess::close);
        dirs.values().forEach(ServerProcess::deleteStore);
        servers.clear();
    }
}
