package io.erda.fabric.tcp;

import io.erda.fabric.CompletionQueue;
import io.erda.fabric.Endpoint;
import io.erda.fabric.EndpointOptions;
import io.erda.fabric.Fabric;
import io.erda.fabric.FabricCapabilities;
import io.erda.fabric.FabricException;
import io.erda.fabric.FabricStats;
import io.erda.fabric.Listener;
import io.erda.fabric.MemoryRegion;
import io.erda.fabric.RegisterOptions;
import io.erda.fabric.emulated.RegionTable;
import io.erda.fabric.emulated.EmulatedCompletionQueue;
import java.lang.foreign.MemorySegment;
import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.net.URI;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.LongAdder;

/**
 * A tcp software RNIC instance. Its engine threads (per connection: a responder executing the peer's requests
 * against registered memory, and a completer turning responses into completions; per listener: an acceptor) are
 * the only threads that touch memory on behalf of a peer, and their CPU time is what {@link #stats()} reports.
 */
final class TcpFabric implements Fabric {
    private static final FabricCapabilities CAPABILITIES = FabricCapabilities.software("tcp software RNIC");
    static final System.Logger LOG = System.getLogger("io.erda.fabric.tcp");
    private static final ThreadMXBean THREADS = ManagementFactory.getThreadMXBean();

    private final RegionTable<TcpRegion> regions = new RegionTable<>(0x1000);
    private final Set<Thread> engineThreads = ConcurrentHashMap.newKeySet();
    private final Set<AutoCloseable> open = ConcurrentHashMap.newKeySet();
    private final LongAdder exitedEngineCpu = new LongAdder();
    /** Engine threads' CPU spent in completion queues' idle consumers (estimated, see TcpEndpoint.completeRecv). */
    private final LongAdder hostedCpu = new LongAdder();
    /** One direct consumer run in this many is measured for {@link #hostedCpu}. */
    static final int HOSTED_CPU_SAMPLE = 16;
    final LongAdder oneSidedExecuted = new LongAdder();
    final LongAdder bytesReadByPeers = new LongAdder();
    final LongAdder bytesWrittenByPeers = new LongAdder();
    private final TcpSettings settings;
    private volatile boolean closed;

    TcpFabric(TcpSettings settings) {
        this.settings = settings;
        if (THREADS.isThreadCpuTimeSupported() && !THREADS.isThreadCpuTimeEnabled()) {
            THREADS.setThreadCpuTimeEnabled(true);
        }
    }

    TcpSettings settings() {
        return settings;
    }

    @Override
    public String scheme() {
        return "tcp";
    }

    @Override
    public MemoryRegion register(MemorySegment segment, RegisterOptions options) {
        checkOpen();
        int key = regions.newKey();
        TcpRegion region = new TcpRegion(this, segment, options, key);
        regions.put(key, region);
        return region;
    }

    void deregister(TcpRegion region) {
        regions.remove(region.rkey());
    }

    RegionTable<TcpRegion> regionTable() {
        return regions;
    }

    @Override
    public CompletionQueue createCompletionQueue(int capacity) {
        return EmulatedCompletionQueue.withDirectDelivery(capacity);
    }

    @Override
    public Endpoint createEndpoint(EndpointOptions options) {
        checkOpen();
        return track(new TcpEndpoint(this, options));
    }

    @Override
    public Listener listen(URI uri) {
        checkOpen();
        return track(new TcpListener(this, uri));
    }

    <T extends AutoCloseable> T track(T resource) {
        open.add(resource);
        return resource;
    }

    void untrack(AutoCloseable resource) {
        open.remove(resource);
    }

    static long threadCpuNanos() {
        return THREADS.getCurrentThreadCpuTime();
    }

    /** A sampled direct consumer run's CPU (TcpEndpoint.completeRecv): the application's, taken off the engine's. */
    void hostedCpu(long sampledNanos) {
        if (sampledNanos > 0) {
            hostedCpu.add(sampledNanos * HOSTED_CPU_SAMPLE);
        }
    }

    /**
     * Starts an engine thread; its CPU time counts as the NIC's, also after it ends, except what completion queues'
     * idle consumers spend on it ({@link CompletionQueue#consumeWhenIdle}).
     */
    Thread startEngineThread(String name, Runnable body) {
        return Thread.ofPlatform().daemon().name(name).start(() -> {
            Thread me = Thread.currentThread();
            engineThreads.add(me);
            try {
                body.run();
            } finally {
                long cpu = THREADS.getCurrentThreadCpuTime();
                engineThreads.remove(me);
                if (cpu > 0) {
                    exitedEngineCpu.add(cpu);
                }
            }
        });
    }

    @Override
    public FabricCapabilities capabilities() {
        return CAPABILITIES;
    }

    /** Counted by this instance's endpoints as they post ({@link Fabric#posted}). */
    final io.erda.fabric.PostedCounts posted = new io.erda.fabric.PostedCounts();

    @Override
    public java.util.Map<io.erda.fabric.Opcode, Long> posted() {
        return posted.snapshot();
    }

    @Override
    public FabricStats stats() {
        long cpu = exitedEngineCpu.sum();
        for (Thread t : engineThreads) {
            long c = THREADS.getThreadCpuTime(t.threadId());
            if (c > 0) {
                cpu += c;
            }
        }
        return new FabricStats(Math.max(0, cpu - hostedCpu.sum()), oneSidedExecuted.sum(), bytesReadByPeers.sum(),
                bytesWrittenByPeers.sum());
    }

    @Override
    public List<MemoryRegion> regions() {
        return List.copyOf(regions.all());
    }

    private void checkOpen() {
        if (closed) {
            throw new FabricException("tcp fabric is closed");
        }
    }

    @Override
    public void close() {
        closed = true;
        for (AutoCloseable c : List.copyOf(open)) {
            try {
                c.close();
            } catch (Exception e) {
                LOG.log(System.Logger.Level.DEBUG, "closing " + c + " failed", e);
            }
        }
        open.clear();
        // After close returns no engine thread touches registered memory any more, so the caller may free it
        // (closing an Arena while a socket read still fills one of its segments fails).
        long deadline = System.nanoTime() + java.util.concurrent.TimeUnit.SECONDS.toNanos(5);
        for (Thread t : List.copyOf(engineThreads)) {
            if (t == Thread.currentThread()) {
                continue;
            }
            try {
                t.join(Math.max(1, (deadline - System.nanoTime()) / 1_000_000));
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return;
            }
            if (t.isAlive()) {
                LOG.log(System.Logger.Level.WARNING, "engine thread " + t.getName() + " still running after close");
            }
        }
    }
}
