package io.erda.bench.redis;

import io.erda.bench.backend.ScratchDirectory;
import io.erda.bench.backend.ServerProcess;
import io.erda.bench.backend.ServerSettings;
import io.erda.bench.backend.StoreServer;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.regex.Pattern;
import java.util.stream.Stream;

/**
 * One redis-server process on a free loopback port, its files in {@code <pmDir>/redis} (the tmpfs the Erda rows keep
 * their PM files on): an append-only file with {@code appendfsync always}, so every write is in the file and fsynced
 * before Redis replies, as an Erda PUT is persisted before it returns; no RDB snapshots ({@code save ""}). Closing
 * it stops the process (SIGTERM) and deletes its directory, so no AOF outlives the run.
 *
 * <p>Its counters, read by the driver before and after each run like an Erda server's STATS:
 * <ul>
 *   <li>{@code server_cpu_ns}: the process's CPU time, utime + stime of {@code /proc/PID/stat} (every thread, user
 *       and kernel, so the loopback TCP stack and the fsyncs count), in clock ticks of 10 ms;</li>
 *   <li>{@code aof_bytes}, also reported as {@code nvm_bytes_written}: the bytes of the files in its directory (the
 *       AOF, its manifest). Not cache lines stored as the Erda servers count them, but what Redis made durable.</li>
 * </ul>
 * Automatic AOF rewrites are off ({@code auto-aof-rewrite-percentage 0}), so the AOF's growth over a run is the bytes
 * Redis appended and Redis compacts nothing during a run. The Erda rows differ: their servers run their log cleaner
 * at the comparison's {@code --clean-threshold} ({@code auto} by default,
 * {@link ServerSettings#steadyStateCleanThreshold}; 0 turns it off), which cleans a head whenever its chain outgrows
 * the threshold, and their NVM bytes and server CPU include what it writes and spends.
 */
final class RedisServer implements StoreServer {

    /** "Ready to accept connections" (Redis 7 adds " tcp"): the server is listening. */
    private static final Pattern READY = Pattern.compile("Ready to accept connections");
    /**
     * USER_HZ, the unit of utime and stime in /proc/PID/stat: part of the kernel's ABI, 100 on every architecture
     * Erda runs on (independent of the kernel's internal HZ).
     */
    private static final long NANOS_PER_TICK = 10_000_000L;
    private static final int PORT_ATTEMPTS = 5;

    private final ServerProcess process;
    private final String uri;
    private final Path dataDir;

    private RedisServer(ServerProcess process, String uri, Path dataDir) {
        this.process = process;
        this.uri = uri;
        this.dataDir = dataDir;
    }

    static RedisServer start(Path executable, ServerSettings settings) throws IOException {
        Path dataDir = Files.createDirectories(settings.pmDir().resolve("redis"));
        String name = "redis-server-" + settings.pmDir().getFileName();
        for (int attempt = 1; ; attempt++) {
            // A port free now may be taken before redis-server binds it: then it exits saying so, and we try another.
            int port = freeLoopbackPort();
            Path conf = Files.writeString(Files.createDirectories(settings.logDir()).resolve(name + ".conf"),
                config(port, dataDir), StandardCharsets.UTF_8);
            try {
                ServerProcess p = ServerProcess.launch(name, List.of(executable.toString(), conf.toString()), READY, settings);
                return new RedisServer(p, "redis://127.0.0.1:" + port, dataDir);
            } catch (IOException e) {
                if (attempt >= PORT_ATTEMPTS || e.getMessage() == null || !e.getMessage().contains("Address already in use")) {
                    ScratchDirectory.delete(dataDir);
                    throw e;
                }
            }
        }
    }

    /** redis.conf: loopback only, files in {@code dataDir}, AOF fsynced before every reply, no snapshots. */
    static String config(int port, Path dataDir) {
        return String.join("\n",
            "# written by erda-bench (io.erda.bench.redis.RedisServer) for one comparison run",
            "bind 127.0.0.1",
            "port " + port,
            "protected-mode yes",
            "daemonize no",
            "logfile \"\"",
            "databases 1",
            "always-show-logo no",
            "dir " + quoted(dataDir.toAbsolutePath().toString()),
            "save \"\"",
            "appendonly yes",
            "appendfsync always",
            "auto-aof-rewrite-percentage 0",
            "");
    }

    /** A redis.conf string argument: double quotes, with backslash and quote escaped. */
    private static String quoted(String s) {
        return "\"" + s.replace("\\", "\\\\").replace("\"", "\\\"") + "\"";
    }

    private static int freeLoopbackPort() throws IOException {
        try (ServerSocket s = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            return s.getLocalPort();
        }
    }

    @Override
    public String uri() {
        return uri;
    }

    /** The process id of redis-server. */
    long pid() {
        return process.pid();
    }

    /** Where its AOF is; deleted on {@link #close()}. */
    Path dataDir() {
        return dataDir;
    }

    @Override
    public Map<String, Long> stats() throws IOException {
        Map<String, Long> stats = new LinkedHashMap<>();
        long aof = aofBytes();
        stats.put("server_cpu_ns", cpuNanos());
        stats.put("aof_bytes", aof);
        stats.put("nvm_bytes_written", aof);
        return stats;
    }

    /** utime + stime of the process (all its threads), in nanoseconds. */
    long cpuNanos() throws IOException {
        String stat = Files.readString(Path.of("/proc", Long.toString(process.pid()), "stat"), StandardCharsets.US_ASCII);
        // "pid (comm) state ppid ...": comm may hold spaces and parentheses, so count fields after its last ')';
        // field 3 (state) is the first there, utime and stime are fields 14 and 15.
        String[] f = stat.substring(stat.lastIndexOf(')') + 2).split(" ");
        return (Long.parseLong(f[11]) + Long.parseLong(f[12])) * NANOS_PER_TICK;
    }

    private long aofBytes() throws IOException {
        try (Stream<Path> files = Files.walk(dataDir)) {
            return files.filter(Files::isRegularFile).mapToLong(p -> {
                try {
                    return Files.size(p);
                } catch (IOException e) {
                    throw new UncheckedIOException(e);
                }
            }).sum();
        } catch (UncheckedIOException e) {
            throw e.getCause();
        }
    }

    /** Stops redis-server (SIGTERM: it flushes the AOF and exits) and deletes its directory. */
    @Override
    public void close() throws IOException {
        try {
            process.close();
        } finally {
            ScratchDirectory.delete(dataDir);
        }
    }
}
