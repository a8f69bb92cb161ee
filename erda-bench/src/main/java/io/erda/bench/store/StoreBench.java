package io.erda.bench.store;

import io.erda.bench.backend.ErdaBackend;
import io.erda.bench.backend.ScratchDirectory;
import io.erda.client.ClientOptions;
import io.erda.client.KeyValueClient;
import io.erda.client.PooledClient;
import io.erda.protocol.PersistenceMethod;
import io.erda.server.RequestServer;
import io.erda.server.ServerConfig;
import io.erda.server.rdmp.RdmpConfig;
import java.io.IOException;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.concurrent.Callable;
import org.HdrHistogram.Histogram;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine;

/**
 * Single-thread store benchmark, fabrics and protocols side by side in one run: per fabric and protocol a server (in
 * this process, its own threads and fabric instance) and one client connection. Per value size: CREATE N keys,
 * UPDATE them (twice, the first pass unmeasured), GET random ones for a while, DELETE them. Reports PUT and GET latency (p50/p99, HdrHistogram) and rate;
 * NVM bytes written per create, update and delete from the server's STATS deltas next to the paper's Table 1 (Erda);
 * server CPU (server threads) and NIC-engine CPU per operation from STATS deltas. With more than one value size or
 * protocol, the value-size sweep of RDMP-KV's Figs. 7 and 8 follows ({@link ValueSizeSweep}): server CPU per PUT and
 * server-side PUT throughput against value size, a plot of both, and the paper's findings as ratios of this run.
 */
@Command(name = "store-bench", mixinStandardHelpOptions = true, description = "Erda GET/PUT latency, NVM bytes and server CPU per op")
public final class StoreBench implements Callable<Integer> {
    /** Keys are exactly this long ("key-SSSSS-IIIIII"): Size(key) in Table 1. */
    static final int KEY_LENGTH = 16;

    @Option(names = "--fabrics", split = ",", defaultValue = "shm,tcp", description = "providers side by side (default shm,tcp)")
    List<String> fabrics;

    @Option(names = {"--sizes", "--value-sizes"}, split = ",", defaultValue = "16,1024,4096",
            converter = io.erda.server.ErdaServerMain.SizeConverter.class,
            description = "value sizes, bytes or with k/m (default: ${DEFAULT-VALUE}); the sweep: 64,1k,4k,16k,64k,256k")
    List<Long> sizeOptions;
    private List<Integer> sizes;

    @Option(names = "--protocols", split = ",", defaultValue = "erda", description = "client protocols side by side:"
            + " erda, erda-one-sided (Erda with --put one-sided), redo-log, read-after-write, herd, rdmp-sa, rdmp-cc"
            + " (default: ${DEFAULT-VALUE})")
    List<String> protocols;

    @Option(names = "--rdmp-pool-size", defaultValue = "4g", converter = io.erda.server.ErdaServerMain.SizeConverter.class,
            description = "PM pool of the RDMP-KV protocols' servers (default: ${DEFAULT-VALUE}; a 256 KiB value takes a"
            + " 512 KiB slot, and up to two versions of a key are live at once)")
    long rdmpPoolSize;

    @Option(names = "--rdmp-sa-threshold", defaultValue = "16k", converter = io.erda.server.ErdaServerMain.SizeConverter.class,
            description = "RDMP-SA sends values shorter than this in the request (default: ${DEFAULT-VALUE}, the paper's)")
    long rdmpSaThreshold;

    @Option(names = "--out", description = "sweep report directory (default: a fresh results/store-bench-TIMESTAMP)")
    Path out;

    @Option(names = "--keys", defaultValue = "20000", description = "keys created, updated and deleted per size")
    int keys;

    @Option(names = "--get-seconds", defaultValue = "3", description = "measured GET seconds per size")
    double getSeconds;

    @Option(names = "--warmup-keys", defaultValue = "5000", description = "keys of the unmeasured warm-up per protocol"
            + " and fabric (JIT, page faults of fresh PM files), shared among the value sizes, at least 200 each: every"
            + " size is warmed before any is measured (default: ${DEFAULT-VALUE})")
    int warmupKeys;

    @Option(names = "--persistence", defaultValue = "wsp", description = "wsp, read-after-write or server-flush")
    String persistence;

    @Option(names = "--dir", description = "directory for the stores (default /dev/shm)")
    Path dir;

    @Option(names = "--huge-pages", defaultValue = "off", description = "the servers' --huge-pages: off, or thp (the"
            + " table and log regions mapped with 2 MiB pages, populated when made, so no PUT faults a page of the log"
            + " in; --dir must be a tmpfs mounted with huge=within_size or huge=always) (default: ${DEFAULT-VALUE})")
    String hugePages;

    @Option(names = "--latency-check", description = "instead of the table: Erda GET and PUT means next to the fabric's"
            + " READ and SEND/RECV round trips, as ratios, in YCSB's mixes C, update-only, A and B, with Redo Logging"
            + " and the one-sided PUT's update-only beside (1 KiB values unless --sizes gives one size; --keys 10000"
            + " unless given)")
    boolean latencyCheck;

    @Option(names = "--rounds", defaultValue = "3", description = "--latency-check: measured rounds (1..100; medians last)")
    int rounds;

    @Option(names = "--seconds", defaultValue = "2", description = "--latency-check: seconds per figure and round")
    double seconds;

    @Option(names = "--pm-write-latency-ns", description = "modelled PM write latency per cache line (default: 0;"
            + " --latency-check: 150 like ycsb-compare, paper §5.1)")
    Long pmWriteLatencyNs;

    @picocli.CommandLine.Spec
    picocli.CommandLine.Model.CommandSpec spec;

    record Row(String protocol, String fabric, int size, String op, long count, double opsPerSecond, double p50Micros, double p99Micros,
               double nvmBytesPerOp, double serverCpuNsPerOp, double engineCpuNsPerOp) { }

    public static void main(String[] args) {
        System.exit(commandLine().execute(args));
    }

    /** The command as main runs it: a bad value (an unknown protocol, a size) is one line and exit 2, not a trace. */
    static CommandLine commandLine() {
        return io.erda.server.ErdaServerMain.reportingBadValues(new CommandLine(new StoreBench()), "store-bench");
    }

    @Override
    public Integer call() throws Exception {
        Path base = dir != null ? dir : Files.isDirectory(Path.of("/dev/shm")) ? Path.of("/dev/shm") : Path.of(System.getProperty("java.io.tmpdir"));
        checkSizes();
        if (latencyCheck) {
            return latencyCheck(base);
        }
        // an unknown name fails before any store is made, naming every protocol a row can be
        java.util.Set<String> known = new java.util.TreeSet<>(new ErdaBackend().protocols());
        for (String p : protocols) {
            if (!known.contains(p)) {
                throw new IllegalArgumentException("protocol '" + p + "' is not one of store-bench's rows: " + known);
            }
        }
        List<Row> rows = new ArrayList<>();
        int runs = fabrics.size() * protocols.size();
        int done = 0;
        for (String fabric : fabrics) {
            for (String protocol : protocols) {
                System.out.printf(Locale.ROOT, "store-bench: [%d/%d] %s on %s, value sizes %s, %d keys each%n", ++done,
                        runs, protocol, fabric, sizes, keys);
                Path work = Files.createTempDirectory(base, "store-bench-" + fabric + "-" + protocol + "-");
                try {
                    rows.addAll(runFabric(fabric, protocol, work));
                } finally {
                    ScratchDirectory.delete(work);
                }
            }
        }
        print(rows);
        if (sizes.size() > 1 || protocols.size() > 1) {
            Path report = out != null ? out : Path.of("results", "store-bench-" + java.time.LocalDateTime.now()
                    .format(java.time.format.DateTimeFormatter.ofPattern("yyyyMMdd-HHmmss")));
            ValueSizeSweep.report(rows, rdmpSaThreshold, report, System.out);
        }
        return 0;
    }

    /** {@code --sizes} as ints, each from 1 to 1 GiB; else a ParameterException naming the value and the limit. */
    private void checkSizes() {
        sizes = new ArrayList<>();
        for (long size : sizeOptions) {
            if (size < 1 || size > 1 << 30) {
                throw new CommandLine.ParameterException(spec.commandLine(), "value size " + size
                        + " is outside [1, " + (1 << 30) + "]");
            }
            sizes.add((int) size);
        }
    }

    private int latencyCheck(Path base) throws Exception {
        if (rounds < 1 || rounds > 100) {
            throw new CommandLine.ParameterException(spec.commandLine(), "--rounds " + rounds + " outside 1..100");
        }
        boolean sizeGiven = spec.commandLine().getParseResult().hasMatchedOption("--sizes");
        if (sizeGiven && sizes.size() != 1) {
            throw new CommandLine.ParameterException(spec.commandLine(), "--latency-check takes one value size, not "
                    + sizes);
        }
        int checkKeys = spec.commandLine().getParseResult().hasMatchedOption("--keys") ? keys : 10_000;
        new LatencyCheck(fabrics, rounds, seconds, checkKeys, sizeGiven ? sizes.getFirst() : 1024,
                pmWriteLatencyNs != null ? pmWriteLatencyNs : 150, PersistenceMethod.fromOption(persistence), base,
                System.out).run();
        return 0;
    }

    /** One row's servers and client: {@code row} is a client protocol or ErdaBackend's erda-one-sided. */
    private List<Row> runFabric(String fabric, String row, Path work) {
        ClientOptions.Protocol protocol = ErdaBackend.clientProtocol(row);
        URI listen = switch (fabric) {
            case "tcp" -> URI.create("tcp://127.0.0.1:0");
            case "shm" -> URI.create("shm://" + work.resolve("fabric"));
            default -> throw new IllegalArgumentException("fabric " + fabric + " is not tcp or shm");
        };
        ServerConfig config = ServerConfig.builder(work.resolve("store"), listen)
                .persistence(PersistenceMethod.fromOption(persistence))
                .pmWriteLatencyNanos(pmWriteLatencyNs != null ? pmWriteLatencyNs : 0)
                .rdmp(new RdmpConfig(rdmpPoolSize, Math.toIntExact(rdmpSaThreshold)))
                .hugePages(io.erda.server.platform.HugePages.fromOption(hugePages))
                .put(ErdaBackend.putMode(row)).build();
        List<Row> rows = new ArrayList<>();
        try (RequestServer server = RequestServer.start(config);
             PooledClient client = (PooledClient) KeyValueClient.connect(ClientOptions.of(server.uri()).withPoolSize(1)
                     .withProtocol(protocol))) {
            long limit = (long) client.storeInfo().maxValueLength() + 1 - KEY_LENGTH;
            List<Integer> served = new ArrayList<>();
            for (int size : sizes) {
                if (size > limit) {
                    // Redo Logging and Read After Write stop below 128 KiB: said, not failed
                    System.out.printf(Locale.ROOT, "store-bench: skipping %s at %d B: value size %d exceeds the %s"
                            + " server's limit of %d B for a %d-byte key%n", protocol.option(), size, size,
                            protocol.option(), limit, KEY_LENGTH);
                } else {
                    served.add(size);
                }
            }
            // Unmeasured, every size before any is measured: a warm-up at one size left the first size measured
            // dearer than the rest whichever it was (docs/MEASUREMENTS.md, RDMP-CC on a quiet host): the server's
            // paths for each size class (RDMP-KV's pool carves slots per class) and the copies' JIT profiles.
            int perSize = Math.max(200, warmupKeys / Math.max(1, served.size()));
            for (int size : served) {
                runSize(row, fabric, size, client, perSize, "wrm");
            }
            for (int size : served) {
                rows.addAll(runSize(row, fabric, size, client, keys, "key"));
            }
        }
        return rows;
    }

    /** One size's create, update, GET and delete passes over {@code keys} keys named prefix-size-index, 16 bytes for a 3-letter prefix. */
    private List<Row> runSize(String protocol, String fabric, int size, PooledClient client, int keys, String prefix) {
        byte[][] keyBytes = new byte[keys][];
        for (int i = 0; i < keys; i++) {
            keyBytes[i] = String.format(Locale.ROOT, "%s-%05d-%06d", prefix, size % 100_000, i)
                    .getBytes(StandardCharsets.US_ASCII);
        }
        byte[] value = new byte[size];
        new SplittableRandom(size).nextBytes(value);
        List<Row> rows = new ArrayList<>();
        rows.add(measure(protocol, fabric, size, "create", client, keys, i -> client.put(keyBytes[i], value)));
        // unmeasured: every key overwritten once first, so the measured pass is a steady-state overwrite (RDMP-KV's
        // pool frees a client-committed version at the key's next write; the first overwrites carve fresh slots)
        measure(protocol, fabric, size, "update-warmup", client, keys, i -> client.put(keyBytes[i], value));
        rows.add(measure(protocol, fabric, size, "update", client, keys, i -> client.put(keyBytes[i], value)));
        SplittableRandom random = new SplittableRandom(42);
        measure(protocol, fabric, size, "get-warmup", client, Math.min(keys, 20_000), i -> client.get(keyBytes[random.nextInt(keys)]));
        int gets = estimateGets(client, keyBytes);
        // let the lease validator settle the update phase's reservations first: that is PUT work, not GET work
        sleep(client.storeInfo().leaseNanos() / 1_000_000 + 200);
        rows.add(measure(protocol, fabric, size, "get", client, gets, i -> {
            if (client.get(keyBytes[random.nextInt(keys)]) == null) {
                throw new IllegalStateException("a created key reads as not found");
            }
        }));
        rows.add(measure(protocol, fabric, size, "delete", client, keys, i -> client.delete(keyBytes[i])));
        return rows;
    }

    /** GETs that fill about --get-seconds, from a short timed sample. */
    private int estimateGets(PooledClient client, byte[][] keyBytes) {
        long start = System.nanoTime();
        int n = 2000;
        for (int i = 0; i < n; i++) {
            client.get(keyBytes[i % keyBytes.length]);
        }
        double perGet = (System.nanoTime() - start) / (double) n;
        return (int) Math.max(1000, Math.min(50_000_000, getSeconds * 1e9 / perGet));
    }

    interface Op {
        void run(int i);
    }

    private static void sleep(long millis) {
        try {
            Thread.sleep(millis);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    private static Row measure(String protocol, String fabric, int size, String name, PooledClient client, int count,
                               Op op) {
        Histogram h = new Histogram(60_000_000_000L, 3);
        // the STATS requests themselves cost server CPU: measure one empty interval and subtract it
        Map<String, String> empty = client.serverStats();
        Map<String, String> before = client.serverStats();
        long statsCpu = delta(empty, before, "server_cpu_ns");
        long statsEngine = delta(empty, before, "engine_cpu_ns");
        long start = System.nanoTime();
        for (int i = 0; i < count; i++) {
            long t0 = System.nanoTime();
            op.run(i);
            h.recordValue(System.nanoTime() - t0);
        }
        long elapsed = System.nanoTime() - start;
        Map<String, String> after = client.serverStats();
        return new Row(protocol, fabric, size, name, count, count * 1e9 / elapsed, h.getValueAtPercentile(50) / 1000.0,
                h.getValueAtPercentile(99) / 1000.0, delta(before, after, "nvm_bytes_written") / (double) count,
                Math.max(0, delta(before, after, "server_cpu_ns") - statsCpu) / (double) count,
                Math.max(0, delta(before, after, "engine_cpu_ns") - statsEngine) / (double) count);
    }

    private static long delta(Map<String, String> before, Map<String, String> after, String name) {
        String a = after.get(name);
        String b = before.get(name);
        return a == null || b == null ? 0 : Long.parseLong(a) - Long.parseLong(b);
    }

    /** Paper Table 1 for Erda, N = key + value bytes as the paper defines it. */
    static long paperBytes(String op, int size) {
        int n = KEY_LENGTH + size;
        return switch (op) {
            case "create" -> KEY_LENGTH + 10 + n;
            case "update" -> 9 + n;
            case "delete" -> KEY_LENGTH + 9;
            default -> 0;
        };
    }

    /**
     * What our layout writes: the 16-byte entry on create (8-byte word + 8-byte meta with fingerprint, head, hop
     * distance; the paper counts the full key instead of a fingerprint), only the 8-byte atomic word on update and
     * delete, and the object with its 12-byte header padded to 8 bytes (the paper's header is 5 bytes); a delete's
     * object is a tombstone without value.
     */
    static long layoutBytes(String op, int size) {
        long object = (12 + KEY_LENGTH + size + 7) & -8L;
        long tombstone = (12 + KEY_LENGTH + 7) & -8L;
        return switch (op) {
            case "create" -> 16 + object;
            case "update" -> 8 + object;
            case "delete" -> 8 + tombstone;
            default -> 0;
        };
    }

    private static void print(List<Row> rows) {
        System.out.println("| protocol | fabric | value B | op | ops | ops/s | p50 us | p99 us | NVM B/op | our layout B | paper Table 1 B | server CPU ns/op | NIC engine CPU ns/op |");
        System.out.println("|---|---|---|---|---|---|---|---|---|---|---|---|---|");
        for (Row r : rows) {
            boolean write = !r.op().equals("get") && r.protocol().equals("erda"); // Table 1 is Erda's
            System.out.printf(Locale.ROOT, "| %s | %s | %d | %s | %d | %.0f | %.1f | %.1f | %s | %s | %s | %.0f | %.0f |%n",
                    r.protocol(), r.fabric(), r.size(), r.op(), r.count(), r.opsPerSecond(), r.p50Micros(), r.p99Micros(),
                    String.format(Locale.ROOT, "%.1f", r.nvmBytesPerOp()),
                    write ? Long.toString(layoutBytes(r.op(), r.size())) : "-",
                    write ? Long.toString(paperBytes(r.op(), r.size())) : "-",
                    r.serverCpuNsPerOp(), r.engineCpuNsPerOp());
        }
    }
}
