package io.erda.bench.store;

import io.erda.bench.backend.ScratchDirectory;
import io.erda.bench.backend.StatsText;
import io.erda.client.ClientOptions;
import io.erda.client.KeyValueClient;
import io.erda.protocol.PersistenceMethod;
import io.erda.server.RequestServer;
import io.erda.server.ServerConfig;
import java.io.IOException;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.Callable;
import java.util.function.BiConsumer;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine;

/**
 * The paper's Table 1 (§5.6) by measurement: NVM bytes written per create, update and delete for Erda, Redo Logging
 * and Read After Write, and RDMP-KV's three protocols beside them (which the table has no formula for). Per protocol a fresh embedded server on shm (no write-latency model: bytes, not time); per
 * value size K keys of {@link StoreBench#KEY_LENGTH} bytes are created, updated and deleted through the protocol's
 * client, and each phase's bytes are the server's {@code nvm_bytes_written} delta once every baseline write has been
 * applied, divided by K. Printed next to what our layouts should write and the paper's formula.
 */
@Command(name = "nvm-table", mixinStandardHelpOptions = true, description = "NVM bytes per create/update/delete, all protocols (paper Table 1)")
public final class NvmTable implements Callable<Integer> {

    @Option(names = "--sizes", split = ",", defaultValue = "16,1024,4096", description = "value sizes in bytes")
    List<Integer> sizes;

    @Option(names = "--keys", defaultValue = "2000", description = "keys created, updated and deleted per size")
    int keys;

    @Option(names = "--dir", description = "directory for the stores (default /dev/shm)")
    Path dir;

    @Option(names = "--protocols", split = ",", defaultValue = "erda,redo-log,read-after-write,herd,rdmp-sa,rdmp-cc",
            description = "protocols measured (default: ${DEFAULT-VALUE})")
    List<String> protocols;

    record Row(String protocol, int size, String op, double measured, long layout, long paper) { }

    public static void main(String[] args) {
        System.exit(new CommandLine(new NvmTable()).execute(args));
    }

    @Override
    public Integer call() throws Exception {
        Path base = dir != null ? dir : Files.isDirectory(Path.of("/dev/shm")) ? Path.of("/dev/shm") : Path.of(System.getProperty("java.io.tmpdir"));
        List<Row> rows = new ArrayList<>();
        List<ClientOptions.Protocol> chosen = protocols.stream().map(ClientOptions.Protocol::fromOption).toList();
        for (ClientOptions.Protocol protocol : chosen) {
            Path work = Files.createTempDirectory(base, "erda-nvm-table-");
            try {
                rows.addAll(run(protocol, work));
            } finally {
                ScratchDirectory.delete(work);
            }
        }
        print(rows);
        return 0;
    }

    private List<Row> run(ClientOptions.Protocol protocol, Path work) {
        URI listen = URI.create("shm://" + work.toAbsolutePath().resolve("fabric"));
        ServerConfig config = ServerConfig.defaults(work.resolve("store"), listen).withPersistence(PersistenceMethod.WSP);
        List<Row> rows = new ArrayList<>();
        try (RequestServer server = RequestServer.start(config);
             KeyValueClient client = KeyValueClient.connect(ClientOptions.of(server.uri()).withProtocol(protocol).withPoolSize(1))) {
            String name = protocol.name().toLowerCase(Locale.ROOT).replace('_', '-');
            for (int s = 0; s < sizes.size(); s++) {
                int size = sizes.get(s);
                byte[][] k = new byte[keys][];
                for (int i = 0; i < keys; i++) {
                    k[i] = String.format(Locale.ROOT, "nvm-%05d-%06d", s, i).getBytes(StandardCharsets.US_ASCII);
                }
                byte[] first = new byte[size];
                byte[] second = new byte[size];
                java.util.Arrays.fill(second, (byte) 1);
                rows.add(phase(server, name, size, "create", k, (c, key) -> c.put(key, first), client));
                rows.add(phase(server, name, size, "update", k, (c, key) -> c.put(key, second), client));
                rows.add(phase(server, name, size, "delete", k, KeyValueClient::delete, client));
            }
        }
        return rows;
    }

    private Row phase(RequestServer server, String protocol, int size, String op, byte[][] keysOfPhase,
                      BiConsumer<KeyValueClient, byte[]> action, KeyValueClient client) {
        long before = settledBytes(server);
        for (byte[] key : keysOfPhase) {
            action.accept(client, key);
        }
        long after = settledBytes(server);
        return new Row(protocol, size, op, (after - before) / (double) keysOfPhase.length, layoutBytes(protocol, op, size),
                paperBytes(protocol, op, size));
    }

    /** nvm_bytes_written once the baselines' applier and poller have nothing pending. */
    private static long settledBytes(RequestServer server) {
        long giveUp = System.nanoTime() + Duration.ofSeconds(60).toNanos();
        while (true) {
            Map<String, Long> stats = StatsText.parse(server.stats());
            if (stats.get("redo_pending") == 0 && stats.get("ring_pending") == 0) {
                return stats.get("nvm_bytes_written");
            }
            if (System.nanoTime() - giveUp > 0) {
                throw new IllegalStateException("baseline writes still pending after 60 s: " + stats);
            }
            Thread.onSpinWait();
        }
    }

    /** Paper Table 1, N = key + value bytes; 0 for RDMP-KV's protocols, which the table has no row for. */
    static long paperBytes(String protocol, String op, int size) {
        if (!protocol.equals("erda") && !protocol.equals("redo-log") && !protocol.equals("read-after-write")) {
            return 0;
        }
        if (protocol.equals("erda")) {
            return StoreBench.paperBytes(op, size);
        }
        int key = StoreBench.KEY_LENGTH;
        int n = key + size;
        return switch (op) {
            case "create" -> key + 12 + 2L * n;
            case "update" -> 4 + 2L * n;
            case "delete" -> key + 8;
            default -> 0;
        };
    }

    /**
     * What our structures write per operation. Destination (all three): {@link StoreBench#layoutBytes}. Redo
     * Logging adds the redo entry as the SEND placed it (16-byte message header, 24-byte REDO_PUT header with CRC
     * and sequence slot, key, value) plus the server's 8-byte sequence stamp; Read After Write adds the object as
     * the client WRITEs it into the ring (our object layout, padded) plus the poller's 8-byte slot zeroing and
     * 8-byte applied-through mark. The redo log's applied-through mark is 8 bytes per applier batch: with one
     * client every batch is one entry, so it is counted once per op (several clients share it).
     */
    static long layoutBytes(String protocol, String op, int size) {
        long destination = StoreBench.layoutBytes(op, size);
        int key = StoreBench.KEY_LENGTH;
        int value = op.equals("delete") ? 0 : size;
        return switch (protocol) {
            case "erda" -> destination;
            case "redo-log" -> destination + 16 + 24 + key + value + 8 + 8;
            case "read-after-write" -> destination + ((12 + key + value + 7) & -8L) + 8 + 8;
            case "herd", "rdmp-sa", "rdmp-cc" -> rdmpLayoutBytes(protocol, op, key, value);
            default -> 0;
        };
    }

    /**
     * RDMP-KV's pool ({@code RdmpPool}) per operation of one pass over fresh keys. A PUT the server stages (herd; rdmp-sa
     * below its 16 KiB threshold) writes the object but its 4-byte slot length ({@code 20 + key + value + 2} with the
     * flags) and its 8-byte sequence number; a create also carves its slot (a 24-byte header); an update frees the old
     * version (8: its sequence zeroed) and the next key's update reuses that slot. rdmp-cc's metadata phase writes
     * {@code 20 + key}, the zeroed flags (2) and the sequence (8), the client the value and the two flags again; its old
     * version is freed only at the key's next write, so each update of one pass carves. A DELETE is a tombstone
     * ({@code 20 + key + 2}, sequence 8) that frees the versions before it and then itself (8 each). rdmp-sa from its
     * threshold: metadata phase and client value as rdmp-cc, the server's two flags, the old version freed at commit.
     */
    static long rdmpLayoutBytes(String protocol, String op, int key, int value) {
        boolean staged = protocol.equals("herd") || protocol.equals("rdmp-sa") && value < 16 << 10;
        long carve = 24;
        // one-sided: the server zeroes the flags and the client writes them again (2 more)
        long object = 20 + key + value + 2 + 8 + (staged ? 0 : 2);
        return switch (op) {
            case "create" -> carve + object;
            case "update" -> protocol.equals("rdmp-cc") ? carve + object : object + 8;
            case "delete" -> (20 + key + 2 + 8) + 8 + 8 + (protocol.equals("rdmp-cc") ? 8 : 0);
            default -> 0;
        };
    }

    private void print(List<Row> rows) {
        System.out.printf(Locale.ROOT, "NVM bytes per operation, %d keys of %d bytes per size (N = key + value)%n%n", keys,
                StoreBench.KEY_LENGTH);
        System.out.println("| protocol | value B | op | measured B/op | our layout B | paper Table 1 B | measured / paper |");
        System.out.println("|---|---|---|---|---|---|---|");
        for (Row r : rows) {
            System.out.printf(Locale.ROOT, "| %s | %d | %s | %.1f | %s | %s | %s |%n", r.protocol(), r.size(), r.op(),
                    r.measured(), r.layout() == 0 ? "-" : Long.toString(r.layout()),
                    r.paper() == 0 ? "-" : Long.toString(r.paper()),
                    r.paper() == 0 ? "-" : String.format(Locale.ROOT, "%.2f", r.measured() / r.paper()));
        }
        System.out.println();
        System.out.println("| value B | op | Erda / Redo Logging (measured) | Erda / Read After Write (measured) | Erda / baseline (paper) |");
        System.out.println("|---|---|---|---|---|");
        for (Row e : rows) {
            if (!e.protocol().equals("erda") || rows.stream().noneMatch(r -> r.protocol().equals("redo-log"))
                    || rows.stream().noneMatch(r -> r.protocol().equals("read-after-write"))) {
                continue;
            }
            Row redo = find(rows, "redo-log", e);
            Row raw = find(rows, "read-after-write", e);
            System.out.printf(Locale.ROOT, "| %d | %s | %.2f | %.2f | %.2f |%n", e.size(), e.op(), e.measured() / redo.measured(),
                    e.measured() / raw.measured(), e.paper() / (double) redo.paper());
        }
    }

    private static Row find(List<Row> rows, String protocol, Row like) {
        return rows.stream().filter(r -> r.protocol().equals(protocol) && r.size() == like.size() && r.op().equals(like.op()))
                .findFirst().orElseThrow();
    }
}
