package io.erda.bench.redis;

import io.erda.bench.backend.ServerSettings;
import io.erda.bench.backend.StoreBackend;
import io.erda.bench.backend.StoreClient;
import io.erda.bench.backend.StoreServer;
import java.io.File;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Optional;
import java.util.Properties;
import java.util.Set;

/**
 * Protocol {@code redis}: Debian's redis-server with appendfsync always, reached with jedis. A different kind of
 * system from the Erda rows: two-sided (its single server thread executes every GET and SET), over loopback TCP
 * whatever fabric the Erda rows use, its data in DRAM with an append-only file for durability.
 *
 * <p>A YCSB record is stored as one Redis string (SET/GET/DEL of the bytes the binding gives, i.e. the record in
 * {@code RecordEncoding}), not as a hash. That is the fair choice: Redis stores and logs exactly the bytes the Erda
 * rows store (value size plus 10 B at 1 KiB), and every operation is one command, as it is one PUT or GET for Erda.
 * A hash of one 1 KiB field is no longer a listpack and costs a dict per record, and YCSB's own redis binding also
 * keeps a sorted set for scans (a ZADD with every insert): both would make Redis do work the other rows do not.
 *
 * <p>The server binary is {@code redis-server} on the PATH, or the file named by the system property
 * {@value #EXECUTABLE_PROPERTY}. Binding property {@code erda.operation-timeout-ms}: the socket timeout of a command.
 */
public final class RedisBackend implements StoreBackend {

    public static final String PROTOCOL = "redis";
    /** System property naming the redis-server executable to use instead of the one on the PATH. */
    public static final String EXECUTABLE_PROPERTY = "erda.redis-server";

    @Override
    public Set<String> protocols() {
        return Set.of(PROTOCOL);
    }

    @Override
    public Optional<String> unavailable(String protocol) {
        if (!PROTOCOL.equals(protocol)) {
            return Optional.of("the redis backend serves only protocol " + PROTOCOL + ", not " + protocol);
        }
        String named = System.getProperty(EXECUTABLE_PROPERTY);
        if (named != null) {
            return Files.isExecutable(Path.of(named)) ? Optional.empty()
                : Optional.of("-D" + EXECUTABLE_PROPERTY + "=" + named + " is not an executable file (Debian package"
                    + " redis-server installs /usr/bin/redis-server)");
        }
        return executable().isPresent() ? Optional.empty()
            : Optional.of("redis-server is not installed (Debian package redis-server: apt-get install redis-server)");
    }

    /** The redis-server to run: the system property's, else the first on the PATH; empty if there is none. */
    static Optional<Path> executable() {
        String named = System.getProperty(EXECUTABLE_PROPERTY);
        if (named != null) {
            return Optional.of(Path.of(named)).filter(Files::isExecutable);
        }
        String path = System.getenv().getOrDefault("PATH", "/usr/bin:/bin");
        for (String dir : (path + File.pathSeparator + "/usr/bin" + File.pathSeparator + "/usr/sbin").split(File.pathSeparator)) {
            if (!dir.isEmpty()) {
                Path candidate = Path.of(dir, "redis-server");
                if (Files.isExecutable(candidate)) {
                    return Optional.of(candidate);
                }
            }
        }
        return Optional.empty();
    }

    @Override
    public StoreServer start(String protocol, ServerSettings settings) throws IOException {
        Optional<String> why = unavailable(protocol);
        if (why.isPresent()) {
            throw new IOException(why.get());
        }
        return RedisServer.start(executable().orElseThrow(), settings);
    }

    @Override
    public StoreClient connect(String protocol, String uri, Properties properties) throws IOException {
        String timeout = properties.getProperty("erda.operation-timeout-ms");
        return RedisStoreClient.connect(uri, timeout == null ? RedisStoreClient.DEFAULT_TIMEOUT_MS : Integer.parseInt(timeout));
    }
}
