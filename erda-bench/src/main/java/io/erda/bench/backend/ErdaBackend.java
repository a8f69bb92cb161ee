package io.erda.bench.backend;

import io.erda.client.ClientOptions;
import io.erda.client.ErdaClient;
import io.erda.client.KeyValueClient;
import io.erda.protocol.PersistenceMethod;
import io.erda.protocol.PutMode;
import io.erda.server.RequestServer;
import io.erda.server.ServerConfig;
import io.erda.server.rdmp.RdmpConfig;
import java.io.IOException;
import java.net.URI;
import java.time.Duration;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Properties;
import java.util.Set;

/**
 * The Erda store: one server binary for every protocol (the server picks a handler per connection from the
 * connect data), clients from erda-client. On the shm fabric the server runs embedded in the driver's JVM
 * ({@link RequestServer}); otherwise, or when asked, as an {@code io.erda.server.ErdaServerMain} process.
 *
 * <p>Binding properties: {@code erda.operation-timeout-ms} (client's wait for one completion or reply).
 */
public final class ErdaBackend implements StoreBackend {
    /**
     * The PM pool of RDMP-KV's protocols (herd, rdmp-sa, rdmp-cc): a 256 KiB value takes a 512 KiB slot and a key may
     * have two versions live, so 4 GiB hold a few thousand such records (a sparse file: only slots written take memory).
     */
    static final long RDMP_POOL_BYTES = 4L << 30;

    /**
     * Erda's client against a server started with {@code --put one-sided} (docs/one-sided-put.md): updates of existing
     * keys are a WRITE into a leased block and a CAS, with no server request each.
     */
    public static final String ONE_SIDED = "erda-one-sided";

    @Override
    public Set<String> protocols() {
        return Set.of("erda", ONE_SIDED, "redo-log", "read-after-write", "herd", "rdmp-sa", "rdmp-cc");
    }

    /** The client protocol of a row: {@link #ONE_SIDED} is Erda's; an unknown name throws naming it. */
    public static ClientOptions.Protocol clientProtocol(String protocol) {
        return protocol.equals(ONE_SIDED) ? ClientOptions.Protocol.ERDA : ClientOptions.Protocol.fromOption(protocol);
    }

    /** The server's {@code --put} for a row: one-sided for {@link #ONE_SIDED}, else reserve. */
    public static PutMode putMode(String protocol) {
        return protocol.equals(ONE_SIDED) ? PutMode.ONE_SIDED : PutMode.RESERVE;
    }

    @Override
    public Optional<String> unavailable(String protocol) {
        boolean known = protocol.equals(ONE_SIDED)
            || Arrays.stream(ClientOptions.Protocol.values()).anyMatch(p -> p.option().equalsIgnoreCase(protocol));
        return known ? Optional.empty()
            : Optional.of("erda-client has no " + protocol + " client yet (ClientOptions.Protocol is "
                + Arrays.toString(ClientOptions.Protocol.values()) + ")");
    }

    @Override
    public StoreServer start(String protocol, ServerSettings s) throws IOException {
        long rdmpPool = rdmpPoolBytes(protocol);
        if (s.separateProcess() || !s.fabric().equals("shm")) {
            return startProcess(s, rdmpPool, putMode(protocol));
        }
        ServerConfig config = ServerConfig.builder(s.pmDir().resolve("store"), listenUri(s))
            .regionSize(s.regionSize() > 0 ? s.regionSize() : null)
            .persistence(PersistenceMethod.fromOption(s.persistence())).pmWriteLatencyNanos(s.pmWriteLatencyNs())
            .rdmp(RdmpConfig.DEFAULTS.withPoolBytes(rdmpPool))
            .put(putMode(protocol)).hugePages(io.erda.server.platform.HugePages.fromOption(s.hugePages())).build();
        RequestServer server;
        try {
            server = RequestServer.start(config);
            if (s.cleanThreshold() > 0) {
                server.startCleaning(s.cleanThreshold());
            }
        } catch (RuntimeException e) {
            throw new IOException("embedded erda server on " + config.listen() + " failed to start: " + e, e);
        }
        return new StoreServer() {
            @Override
            public String uri() {
                return server.uri().toString();
            }

            @Override
            public Map<String, Long> stats() {
                return StatsText.parse(server.stats());
            }

            @Override
            public void close() {
                server.close();
            }
        };
    }

    /** {@link #RDMP_POOL_BYTES} for RDMP-KV's protocols; the server's default for the others, which never use it. */
    private static long rdmpPoolBytes(String protocol) {
        return Set.of("herd", "rdmp-sa", "rdmp-cc").contains(protocol) ? RDMP_POOL_BYTES : RdmpConfig.DEFAULT_POOL_BYTES;
    }

    private static StoreServer startProcess(ServerSettings s, long rdmpPool, PutMode put) throws IOException {
        List<String> args = new java.util.ArrayList<>(List.of("--dir", s.pmDir().resolve("store").toString(),
                "--listen", listenUri(s).toString(), "--pm-write-latency-ns", Long.toString(s.pmWriteLatencyNs()),
                "--persistence", s.persistence()));
        if (s.regionSize() > 0) {
            args.addAll(List.of("--region-size", Long.toString(s.regionSize())));
        }
        args.addAll(List.of("--rdmp-pool-size", Long.toString(rdmpPool)));
        args.addAll(List.of("--put", put.option()));
        // always given: 0 must mean no cleaning here, where erda-server's own default is auto
        args.addAll(List.of("--clean-threshold", Long.toString(s.cleanThreshold())));
        args.addAll(List.of("--huge-pages", s.hugePages()));
        ServerProcess p = ServerProcess.start("erda-server-" + s.fabric() + "-" + s.pmDir().getFileName(),
            io.erda.server.ErdaServerMain.defaultJvmOptions(), "io.erda.server.ErdaServerMain", args, s);
        ErdaClient statsClient;
        try {
            statsClient = ErdaClient.connect(ClientOptions.of(URI.create(p.uri())).withPoolSize(1));
        } catch (RuntimeException e) {
            p.close();
            throw new IOException("erda server at " + p.uri() + " started but refused a connection: " + e, e);
        }
        return new StoreServer() {
            @Override
            public String uri() {
                return p.uri();
            }

            @Override
            public Map<String, Long> stats() {
                return StatsText.parse(statsClient.serverStats());
            }

            @Override
            public void close() {
                statsClient.close();
                p.close();
            }
        };
    }

    private static URI listenUri(ServerSettings s) {
        return switch (s.fabric()) {
            case "shm" -> URI.create("shm://" + s.pmDir().toAbsolutePath().resolve("fabric"));
            case "verbs" -> URI.create("verbs://" + s.verbsHost() + ":0");
            default -> URI.create("tcp://127.0.0.1:0");
        };
    }

    @Override
    public StoreClient connect(String protocol, String uri, Properties properties) throws IOException {
        unavailable(protocol).ifPresent(why -> {
            throw new IllegalArgumentException(why);
        });
        ClientOptions options = ClientOptions.of(URI.create(uri)).withPoolSize(1)
            .withProtocol(clientProtocol(protocol));
        String timeout = properties.getProperty("erda.operation-timeout-ms");
        if (timeout != null) {
            options = options.withOperationTimeout(Duration.ofMillis(Long.parseLong(timeout)));
        }
        return new KeyValueStoreClient(KeyValueClient.connect(options));
    }

    /** A {@link KeyValueClient} of erda-client as a {@link StoreClient}. */
    private record KeyValueStoreClient(KeyValueClient client) implements StoreClient {
        @Override
        public byte[] get(byte[] key) {
            return client.get(key);
        }

        @Override
        public void put(byte[] key, byte[] value) {
            client.put(key, value);
        }

        @Override
        public void delete(byte[] key) {
            client.delete(key);
        }

        @Override
        public void close() {
            client.close();
        }
    }
}
