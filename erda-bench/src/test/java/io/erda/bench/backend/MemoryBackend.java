package io.erda.bench.backend;

import java.io.BufferedInputStream;
import java.io.BufferedOutputStream;
import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.net.Socket;
import java.net.URI;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Set;

/**
 * Test-only backend for protocols {@code memory} and {@code memory-failing}: the driver and binding end to end
 * without the store. Registered in src/test/resources, so it is never on the class path of a real run. Two more
 * stand-ins misbehave (a load only PUTs): {@code memory-cold} answers its first 5 GETs 300 ms late (a cold start,
 * exaggerated), {@code memory-stall} stalls once, for 200 ms, 1.5 s after its first GET.
 */
public final class MemoryBackend implements StoreBackend {

    @Override
    public Set<String> protocols() {
        return Set.of("memory", "memory-failing", "memory-cold", "memory-stall");
    }

    @Override
    public StoreServer start(String protocol, ServerSettings settings) throws IOException {
        List<String> args = switch (protocol) {
            case "memory-failing" -> List.of("--fail");
            case "memory-cold" -> List.of("--slow-first-gets", "5", "--slow-by-ms", "300");
            case "memory-stall" -> List.of("--stall-at-ms", "1500", "--slow-by-ms", "200");
            default -> List.of();
        };
        ServerProcess p = ServerProcess.start("memory-" + protocol, MemoryStoreMain.class.getName(), args, settings);
        MemoryClient statsClient = open(p.uri());
        return new StoreServer() {
            @Override
            public String uri() {
                return p.uri();
            }

            @Override
            public Map<String, Long> stats() throws IOException {
                return statsClient.stats();
            }

            @Override
            public void close() throws IOException {
                statsClient.close();
                p.close();
            }
        };
    }

    @Override
    public StoreClient connect(String protocol, String uri, Properties properties) throws IOException {
        return open(uri);
    }

    private static MemoryClient open(String uri) throws IOException {
        URI u = URI.create(uri);
        Socket s = new Socket(u.getHost(), u.getPort());
        s.setTcpNoDelay(true);
        DataInputStream in = new DataInputStream(new BufferedInputStream(s.getInputStream()));
        DataOutputStream out = new DataOutputStream(new BufferedOutputStream(s.getOutputStream()));
        return new MemoryClient() {
            @Override
            public byte[] get(byte[] key) throws IOException {
                send(MemoryStoreMain.GET, key, null);
                int n = in.readInt();
                if (n < 0) {
                    return null;
                }
                byte[] v = new byte[n];
                in.readFully(v);
                return v;
            }

            @Override
            public void put(byte[] key, byte[] value) throws IOException {
                send(MemoryStoreMain.PUT, key, value);
                in.readInt();
            }

            @Override
            public void delete(byte[] key) throws IOException {
                send(MemoryStoreMain.DELETE, key, null);
                in.readInt();
            }

            Map<String, Long> stats() throws IOException {
                out.write(MemoryStoreMain.STATS);
                out.flush();
                Map<String, Long> stats = new LinkedHashMap<>();
                for (String line : in.readUTF().split("\n")) {
                    int eq = line.indexOf('=');
                    stats.put(line.substring(0, eq), Long.parseLong(line.substring(eq + 1)));
                }
                return stats;
            }

            @Override
            public void close() throws IOException {
                s.close();
            }

            private void send(int op, byte[] key, byte[] value) throws IOException {
                out.write(op);
                out.writeInt(key.length);
                out.write(key);
                if (value != null) {
                    out.writeInt(value.length);
                    out.write(value);
                }
                out.flush();
            }
        };
    }

    /** A stand-in connection that can also ask for the server's counters. */
    private abstract static class MemoryClient implements StoreClient {
        abstract Map<String, Long> stats() throws IOException;
    }
}
