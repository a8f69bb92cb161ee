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
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.Callable;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import org.HdrHistogram.Histogram;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/**
 * Micro-benchmark of the fabric providers side by side: target and initiator are two fabric instances in this
 * process, connected over the provider's real transport. Per provider, single connection: 64 B READ, 64 B WRITE
 * (to its acknowledgement), 64 B WRITE then READ, 4 KiB READ, SEND/RECV ping-pong against an echo thread; then 64 B READ from 2 and 4 initiator threads
 * (one endpoint each). Prints a Markdown table, ratios to the first provider, and the target's engine CPU per op.
 */
@Command(name = "fabric-bench", mixinStandardHelpOptions = true, description = "Fabric provider latency and rate")
public final class FabricBench implements Callable<Integer> {

    @Option(names = "--providers", split = ",", description = "schemes to compare (default: every one on the class path)")
    List<String> providers;

    @Option(names = "--duration", defaultValue = "2", description = "measured seconds per case")
    double durationSeconds;

    @Option(names = "--warmup", defaultValue = "1", description = "warm-up seconds per case")
    double warmupSeconds;

    @Option(names = "--dir", description = "directory for the target's region files (default /dev/shm if present)")
    Path dir;

    /** One measured case of one provider. */
    record Result(String provider, String bench, double opsPerSecond, double p50Micros, double p99Micros, double engineNanosPerOp) { }

    /** One operation as timed by a case; {@code thread} selects that thread's endpoint. */
    interface Operation {
        void run() throws Exception;
    }

    public static void main(String[] args) {
        System.exit(new CommandLine(new FabricBench()).execute(args));
    }

    @Override
    public Integer call() throws Exception {
        List<String> schemes = providers != null ? providers : new ArrayList<>(Fabric.schemes());
        Path base = dir != null ? dir : Files.isDirectory(Path.of("/dev/shm")) ? Path.of("/dev/shm") : Path.of(System.getProperty("java.io.tmpdir"));
        List<Result> results = new ArrayList<>();
        for (String scheme : schemes) {
            Path work = Files.createTempDirectory(base, "fabric-bench-" + scheme);
            try {
                results.addAll(new ProviderRun(scheme, work).run());
            } catch (Exception e) {
                System.err.println("provider " + scheme + " skipped: " + e);
            } finally {
                try (var files = Files.walk(work)) {
                    files.sorted(java.util.Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
                }
            }
        }
        print(results);
        return 0;
    }

    private static URI listenUri(String scheme, Path work) {
        return switch (scheme) {
            case "tcp" -> URI.create("tcp://127.0.0.1:0");
            case "shm" -> URI.create("shm://" + work.toAbsolutePath());
            default -> URI.create(scheme + "://127.0.0.1:0");
        };
    }

    /** The fixture of one provider: target, initiator, a 1 MiB file-backed region. */
    private final class ProviderRun {
        private final String scheme;
        private final Path work;
        private final Arena arena = Arena.ofShared();
        private Fabric target;
        private Fabric initiator;
        private Listener listener;
        private MemoryRegion remote;

        ProviderRun(String scheme, Path work) {
            this.scheme = scheme;
            this.work = work;
        }

        List<Result> run() throws Exception {
            URI uri = listenUri(scheme, work);
            try {
                target = Fabric.open(uri);
                initiator = Fabric.open(uri);
                listener = target.listen(uri);
                remote = targetRegion(1 << 20);
                List<Result> out = new ArrayList<>();
                try (SyncEndpoint one = new SyncEndpoint(connect(null)[0])) {
                    MemoryRegion local = initiator.registerLocal(arena.allocate(8192, 64));
                    long at = remote.address();
                    int rkey = remote.rkey();
                    out.add(measure("READ 64 B", 1, t -> () -> one.read(local, 0, 64, at, rkey)));
                    // a signalled WRITE completes when the target acknowledged it: one round trip
                    out.add(measure("WRITE 64 B", 1, t -> () -> one.write(local, 128, 64, at + 8192, rkey)));
                    out.add(measure("WRITE 64 B + READ", 1, t -> () -> {
                        one.write(local, 0, 64, at + 4096, rkey);
                        one.read(local, 64, 64, at + 4096, rkey);
                    }));
                    out.add(measure("READ 4 KiB", 1, t -> () -> one.read(local, 4096, 4096, at, rkey)));
                }
                out.add(pingPong());
                for (int threads : new int[] {2, 4}) {
                    List<SyncEndpoint> endpoints = new ArrayList<>();
                    List<MemoryRegion> locals = new ArrayList<>();
                    for (int i = 0; i < threads; i++) {
                        endpoints.add(new SyncEndpoint(connect(null)[0]));
                        locals.add(initiator.registerLocal(arena.allocate(64, 64)));
                    }
                    out.add(measure("READ 64 B x" + threads + " threads", threads,
                            t -> () -> endpoints.get(t).read(locals.get(t), 0, 64, remote.address() + 64L * t, remote.rkey())));
                    endpoints.forEach(SyncEndpoint::close);
                }
                return out;
            } finally {
                if (listener != null) {
                    listener.close();
                }
                if (initiator != null) {
                    initiator.close();
                }
                if (target != null) {
                    target.close();
                }
                arena.close();
            }
        }

        private MemoryRegion targetRegion(long size) throws IOException {
            Path file = work.resolve("region.pm");
            MemorySegment segment;
            try (FileChannel ch = FileChannel.open(file, StandardOpenOption.CREATE, StandardOpenOption.READ, StandardOpenOption.WRITE)) {
                ch.truncate(size);
                segment = ch.map(FileChannel.MapMode.READ_WRITE, 0, size, arena);
            }
            return target.register(segment, RegisterOptions.of(Access.all()).withBacking(new Backing(file, 0)));
        }

        /** {initiator side, target side}; {@code beforeAccept} may post the target's receives. */
        private Endpoint[] connect(java.util.function.Consumer<Endpoint> beforeAccept) throws Exception {
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

        private Result pingPong() throws Exception {
            int size = 64;
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
            MemoryRegion clientBuf = initiator.registerLocal(arena.allocate(2L * size, 64));
            long[] ids = {0};
            try {
                return measure("SEND/RECV ping-pong 64 B", 1, t -> () -> {
                    pair[0].postRecv(new RecvRequest(++ids[0], clientBuf, size, size));
                    pair[0].post(WorkRequest.send(ids[0], clientBuf, 0, size).unsignaled());
                    Completion c = pair[0].recvQueue().take(10, TimeUnit.SECONDS);
                    if (c == null || !c.isSuccess()) {
                        throw new IllegalStateException("echo failed: " + c);
                    }
                });
            } finally {
                stop.set(true);
                echo.join();
                pair[0].close();
                pair[1].close();
            }
        }

        private Result measure(String name, int threads, java.util.function.IntFunction<Operation> perThread) throws Exception {
            runFor(threads, perThread, warmupSeconds, null);
            Histogram all = new Histogram(TimeUnit.SECONDS.toNanos(10), 3);
            long cpuBefore = target.stats().engineCpuNanos();
            long start = System.nanoTime();
            long ops = runFor(threads, perThread, durationSeconds, all);
            double seconds = (System.nanoTime() - start) / 1e9;
            long cpu = target.stats().engineCpuNanos() - cpuBefore;
            return new Result(scheme, name, ops / seconds, all.getValueAtPercentile(50) / 1e3,
                    all.getValueAtPercentile(99) / 1e3, ops == 0 ? 0 : (double) cpu / ops);
        }

        private long runFor(int threads, java.util.function.IntFunction<Operation> perThread, double seconds, Histogram into)
                throws Exception {
            long end = System.nanoTime() + (long) (seconds * 1e9);
            List<Thread> workers = new ArrayList<>();
            Histogram[] histograms = new Histogram[threads];
            long[] counts = new long[threads];
            Exception[] failure = new Exception[1];
            for (int t = 0; t < threads; t++) {
                int id = t;
                Operation op = perThread.apply(t);
                histograms[t] = new Histogram(TimeUnit.SECONDS.toNanos(10), 3);
                workers.add(Thread.ofPlatform().start(() -> {
                    try {
                        long now;
                        while ((now = System.nanoTime()) < end) {
                            op.run();
                            histograms[id].recordValue(Math.min(System.nanoTime() - now, TimeUnit.SECONDS.toNanos(10)));
                            counts[id]++;
                        }
                    } catch (Exception e) {
                        failure[0] = e;
                    }
                }));
            }
            long total = 0;
            for (int t = 0; t < threads; t++) {
                workers.get(t).join();
                total += counts[t];
                if (into != null) {
                    into.add(histograms[t]);
                }
            }
            if (failure[0] != null) {
                throw failure[0];
            }
            return total;
        }
    }

    private static void print(List<Result> results) {
        System.out.println();
        System.out.println("| provider | case | ops/s | p50 µs | p99 µs | target engine CPU ns/op |");
        System.out.println("|---|---|---:|---:|---:|---:|");
        for (Result r : results) {
            System.out.println(String.format(Locale.ROOT, "| %s | %s | %,.0f | %.1f | %.1f | %,.0f |", r.provider(), r.bench(),
                    r.opsPerSecond(), r.p50Micros(), r.p99Micros(), r.engineNanosPerOp()));
        }
        Map<String, Result> first = new LinkedHashMap<>();
        for (Result r : results) {
            first.putIfAbsent(r.bench(), r);
        }
        boolean several = results.stream().map(Result::provider).distinct().count() > 1;
        if (several) {
            System.out.println();
            System.out.println("Ratios to " + results.getFirst().provider() + " (rate ×, p50 ×):");
            System.out.println();
            System.out.println("| provider | case | rate ratio | p50 ratio |");
            System.out.println("|---|---|---:|---:|");
            for (Result r : results) {
                Result b = first.get(r.bench());
                System.out.println(String.format(Locale.ROOT, "| %s | %s | %.2f | %.2f |", r.provider(), r.bench(),
                        r.opsPerSecond() / b.opsPerSecond(), r.p50Micros() / b.p50Micros()));
            }
        } else {
            Map<String, Result> byCase = new LinkedHashMap<>();
            results.forEach(r -> byCase.put(r.bench(), r));
            Result single = byCase.get("READ 64 B");
            if (single != null) {
                System.out.println();
                System.out.println("Ratios to the single-thread 64 B READ rate:");
                byCase.values().forEach(r -> System.out.println(String.format(Locale.ROOT, "- %s: %.2f", r.bench(),
                        r.opsPerSecond() / single.opsPerSecond())));
            }
        }
    }
}
