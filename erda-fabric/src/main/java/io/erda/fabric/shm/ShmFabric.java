package io.erda.fabric.shm;

import io.erda.fabric.Access;
import io.erda.fabric.Backing;
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
import io.erda.fabric.emulated.InlineProgress;
import io.erda.fabric.emulated.EmulatedCompletionQueue;
import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.net.URI;
import java.nio.channels.FileChannel;
import java.nio.channels.FileLock;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * The {@code shm:///dir} fabric: peers on one host, one-sided operations as direct access to the target's mapped
 * files, messages through shared-memory rings. See {@link PeerMemory} (one-sided, cooperative checks) and
 * {@link ShmEndpoint} (messages, acknowledgements, ordering).
 *
 * <p>Files. Each instance has a <em>home</em> directory, by default {@code <dir>/<instance>} under the first
 * directory it listens on or connects to (property {@code home} overrides it):
 * <pre>
 * dir/erda.sock                      the listener's Unix-domain socket (handshake, then liveness per connection)
 * dir/&lt;instance&gt;/lock                held locked while the instance is open ({@link ShmHome})
 * dir/&lt;instance&gt;/exports             descriptors of regions with remote access ({@link ExportsFile})
 * dir/&lt;instance&gt;/counters            export generation + per-region byte counters ({@link CountersFile})
 * dir/&lt;instance&gt;/conn-N.ring         a connection's two rings ({@link RingFile}); unlinked once both mapped it
 * </pre>
 * {@code <instance>} is {@code <pid>-<n>}; a home not under a listen or connect directory is
 * {@code /dev/shm/erda-shm-<pid>-<n>}. The home is removed when the fabric closes, or at JVM exit if it was never
 * closed; a crashed process's home is collected by the next process that opens an shm fabric ({@link ShmHome}).
 * Everything here is created {@code 0600} (directories {@code 0700}), or {@code 0660}/{@code 0770} for the group of
 * property {@code group} ({@link ShmFiles}). Properties: {@code home}, {@code group}, {@code ringCapacity} (bytes per
 * ring, a power of two), {@code pollerSleepMillis} (see {@link #DEFAULT_POLLER_SLEEP_MILLIS}).
 */
public final class ShmFabric implements Fabric {
    private static final FabricCapabilities CAPABILITIES = FabricCapabilities.software("shm (same-host shared memory)");
    static final String SOCKET_FILE = "erda.sock";
    static final String EXPORTS_FILE = "exports";
    static final String COUNTERS_FILE = "counters";
    static final int DEFAULT_RING_CAPACITY = 1 << 20;
    /**
     * Longest sleep of an idle poller. Doorbells wake it, so this is a safety net, not a latency: 0 (sleep until a
     * doorbell) is what tests use to prove the doorbells alone suffice.
     */
    static final long DEFAULT_POLLER_SLEEP_MILLIS = 100;
    private static final AtomicInteger INSTANCES = new AtomicInteger();

    private final int instance = INSTANCES.incrementAndGet();
    private final Path configuredHome;
    private final ShmFiles files;
    private final int ringCapacity;
    private final long pollerSleepMillis;
    private final RegionTable<ShmMemoryRegion> regions = new RegionTable<>(0x100);
    private final List<ShmEndpoint> endpoints = new CopyOnWriteArrayList<>();
    private final List<ShmListener> listeners = new CopyOnWriteArrayList<>();
    private final AtomicInteger rings = new AtomicInteger();
    private final Arena homeArena = Arena.ofShared();
    /** Written under {@code this}; volatile for the shutdown hook. */
    private volatile Path home;
    private FileLock homeLock;
    private MemorySegment counters;
    private long generation;
    private int nextCounterSlot;
    /**
     * Counter slots of deregistered exports, taken again before a new one ({@link #register}): only the regions
     * exported at once are bounded by the counters file, not those of the instance's life (the cleaner makes and
     * retires log regions all the time: about 2 a second under a steady update-only load). Guarded by this.
     */
    private final java.util.ArrayDeque<Integer> freeCounterSlots = new java.util.ArrayDeque<>();
    private long retiredBytesWritten;
    private long retiredBytesRead;
    /** Written under {@code this}; volatile for the completion queues' inline progress. */
    private volatile Poller poller;
    private volatile boolean closed;

    ShmFabric(Map<String, String> properties) {
        String h = properties.get("home");
        this.configuredHome = h == null ? null : Path.of(h).toAbsolutePath();
        this.ringCapacity = Integer.parseInt(properties.getOrDefault("ringCapacity", Integer.toString(DEFAULT_RING_CAPACITY)));
        this.pollerSleepMillis = Long.parseLong(properties.getOrDefault("pollerSleepMillis",
                Long.toString(DEFAULT_POLLER_SLEEP_MILLIS)));
        this.files = ShmFiles.of(properties.get("group"));
        ShmHome.collectStale(defaultBase());
    }

    @Override
    public String scheme() {
        return "shm";
    }

    static Path directoryOf(URI uri) {
        if (!"shm".equalsIgnoreCase(uri.getScheme()) || uri.getPath() == null || uri.getPath().isEmpty()) {
            throw new FabricException("shm URI " + uri + " must name a directory: shm:///path/to/dir");
        }
        return Path.of(uri.getPath()).toAbsolutePath();
    }

    static URI uriOf(Path dir) {
        return URI.create("shm://" + dir.toAbsolutePath().toUri().getRawPath());
    }

    // ------------------------------------------------------------------ home: exports and counters

    /** This instance's home, created on first need under {@code near} (or the configured/default place). */
    synchronized Path home(Path near) {
        if (home != null) {
            return home;
        }
        checkOpen();
        if (configuredHome == null && near != null) {
            ShmHome.collectStale(near);
        }
        Path h = configuredHome != null ? configuredHome
                : near != null ? near.resolve(ShmHome.name(false, instance)) : defaultBase().resolve(ShmHome.name(true, instance));
        FileLock lock = null;
        try {
            lock = ShmHome.claim(h, configuredHome != null, files);
            Path countersFile = h.resolve(COUNTERS_FILE);
            long length = CountersFile.fileLength(CountersFile.DEFAULT_SLOTS);
            Files.deleteIfExists(countersFile); // a configured home may hold a dead predecessor's
            try (FileChannel ch = files.createFile(countersFile)) {
                ch.write(java.nio.ByteBuffer.allocate(1), length - 1); // sparse, zero-filled
                counters = ch.map(FileChannel.MapMode.READ_WRITE, 0, length, homeArena);
            }
            CountersFile.format(counters, CountersFile.DEFAULT_SLOTS);
            ExportsFile.write(h.resolve(EXPORTS_FILE), 0, List.of(), files);
        } catch (IOException | RuntimeException e) {
            if (lock != null) {
                ShmHome.delete(h, lock);
            }
            if (e instanceof FabricException fe) {
                throw fe;
            }
            throw new FabricException("cannot create shm instance directory " + h + ": " + e, e);
        }
        home = h;
        homeLock = lock;
        ShmHome.opened(this);
        return h;
    }

    /** Shutdown hook of a JVM exiting with this fabric open: deletes its files (mappings stay until the exit). */
    void deleteFilesAtExit() {
        for (ShmListener l : listeners) {
            l.deleteSocketFile();
        }
        Path h = home; // no lock: a thread holding it must not keep the JVM from exiting
        if (h != null) {
            ShmHome.deleteTree(h);
        }
    }

    /** This instance's home, or null before it needed one (tests). */
    synchronized Path homeIfCreated() {
        return home;
    }

    private static Path defaultBase() {
        Path devShm = Path.of("/dev/shm");
        return Files.isDirectory(devShm) && Files.isWritable(devShm) ? devShm : Path.of(System.getProperty("java.io.tmpdir"));
    }

    long counter(int slot, int field) {
        synchronized (this) {
            if (counters == null) {
                return 0;
            }
        }
        return CountersFile.get(counters, slot, field);
    }

    /** Rewrites the exports file, then publishes its generation (initiators reload when the word changes). */
    private void publishExports() {
        List<ExportedRegion> exported = new ArrayList<>();
        for (ShmMemoryRegion r : regions.all()) {
            if (r.exported()) {
                exported.add(r.export());
            }
        }
        generation++;
        ExportsFile.write(home.resolve(EXPORTS_FILE), generation, exported, files);
        CountersFile.publishGeneration(counters, generation);
    }

    // ------------------------------------------------------------------ registration

    @Override
    public synchronized MemoryRegion register(MemorySegment segment, RegisterOptions options) {
        checkOpen();
        boolean remote = options.access().stream().anyMatch(a -> a != Access.LOCAL_WRITE);
        if (!remote) {
            int key = regions.newKey();
            ShmMemoryRegion region = new ShmMemoryRegion(this, segment, options, key, ShmMemoryRegion.NOT_EXPORTED);
            regions.put(key, region);
            return region;
        }
        if (options.backing() == null) {
            throw new FabricException("shm needs file-backed memory for remote access: the segment of "
                    + segment.byteSize() + " bytes registered with " + options.access() + " has no backing file; map a"
                    + " file (a PM file or one under /dev/shm) and register with RegisterOptions.withBacking(new"
                    + " Backing(file, offset)), or register anonymous memory for local use only (LOCAL_WRITE)");
        }
        checkBacking(segment, options.backing(), "backing file");
        if (options.durableMirror() != null) {
            checkBacking(segment, options.durableMirror().backing(), "durable mirror file");
        }
        home(null);
        int slot;
        if (!freeCounterSlots.isEmpty()) {
            // the old region's counts were frozen at its deregistration; an initiator still inside an access it
            // admitted before then may add a few bytes after this (statistics only)
            slot = freeCounterSlots.poll();
            CountersFile.clear(counters, slot);
        } else if (nextCounterSlot >= CountersFile.DEFAULT_SLOTS) {
            throw new FabricException("shm instance " + home + " has " + nextCounterSlot + " regions exported at once,"
                    + " the most its counters file holds");
        } else {
            slot = nextCounterSlot++;
        }
        int key = regions.newKey();
        ShmMemoryRegion region = new ShmMemoryRegion(this, segment, options, key, slot);
        regions.put(key, region);
        publishExports();
        return region;
    }

    private static void checkBacking(MemorySegment segment, Backing backing, String what) {
        Path file = backing.file();
        long end = backing.fileOffset() + segment.byteSize();
        try {
            long size = Files.size(file);
            if (size < end) {
                throw new FabricException(what + " " + file + " has " + size + " bytes; the region needs ["
                        + backing.fileOffset() + ", " + end + ")");
            }
        } catch (IOException e) {
            throw new FabricException(what + " " + file + " of an shm region is not readable: " + e, e);
        }
    }

    /** Called once per region, by its close(). */
    synchronized void deregister(ShmMemoryRegion region) {
        regions.remove(region.lkey());
        if (region.exported()) {
            region.freezeCounters();
            retiredBytesWritten += region.remoteBytesWritten();
            retiredBytesRead += region.remoteBytesRead();
            if (!closed) {
                publishExports();
                freeCounterSlots.add(region.counterSlot()); // after the publication that drops the region
            }
        }
    }

    @Override
    public List<MemoryRegion> regions() {
        return List.copyOf(regions.all());
    }

    // ------------------------------------------------------------------ endpoints and connections

    @Override
    public CompletionQueue createCompletionQueue(int capacity) {
        return new EmulatedCompletionQueue(capacity, inlineProgress);
    }

    /** Threads waiting on this fabric's completion queues that poll inline now: the poller stands by meanwhile. */
    private final AtomicInteger inlineWaiters = new AtomicInteger();

    /** Inline progress for threads waiting on this fabric's completion queues (see {@link Poller}). */
    private final InlineProgress inlineProgress = new InlineProgress() {
        @Override
        public int poll() {
            Poller p = poller;
            return p == null ? 0 : p.progress();
        }

        @Override
        public void waiterArrived() {
            inlineWaiters.incrementAndGet();
        }

        @Override
        public void waiterLeft(boolean parking) {
            // the decrement, then the poller's standingBy flag (Poller.lastWaiterParks): the poller writes that flag,
            // then reads this count, so one of the two sees the other
            if (inlineWaiters.decrementAndGet() == 0 && parking) {
                Poller p = poller;
                if (p != null) {
                    p.lastWaiterParks();
                }
            }
        }
    };

    @Override
    public Endpoint createEndpoint(EndpointOptions options) {
        checkOpen();
        ShmEndpoint endpoint = new ShmEndpoint(this, options);
        endpoints.add(endpoint);
        return endpoint;
    }

    ShmEndpoint endpointOf(Endpoint endpoint) {
        if (endpoint instanceof ShmEndpoint e && e.fabric() == this) {
            return e;
        }
        throw new FabricException("endpoint " + endpoint + " does not belong to this shm fabric");
    }

    @Override
    public synchronized Listener listen(URI uri) {
        checkOpen();
        Path dir = directoryOf(uri);
        try {
            files.createDirectories(dir);
        } catch (IOException e) {
            throw new FabricException("cannot create shm directory " + dir + ": " + e, e);
        }
        home(dir);
        ShmListener listener = new ShmListener(this, uriOf(dir), dir, files);
        listeners.add(listener);
        return listener;
    }

    /** Creates and formats a ring file for a new connection. */
    Path createRingFile() {
        Path file = home(null).resolve("conn-" + rings.incrementAndGet() + ".ring");
        try (Arena arena = Arena.ofConfined();
             FileChannel ch = files.createFile(file)) {
            long length = RingFile.fileLength(ringCapacity);
            ch.write(java.nio.ByteBuffer.allocate(1), length - 1);
            RingFile.format(ch.map(FileChannel.MapMode.READ_WRITE, 0, length, arena), ringCapacity);
        } catch (IOException e) {
            throw new FabricException("cannot create shm ring file " + file + ": " + e, e);
        }
        return file;
    }

    synchronized Poller poller() {
        checkOpen();
        if (poller == null) {
            poller = new Poller(pollerSleepMillis, inlineWaiters);
        }
        return poller;
    }

    void forget(ShmEndpoint endpoint) {
        endpoints.remove(endpoint);
    }

    void forget(ShmListener listener) {
        listeners.remove(listener);
    }

    // ------------------------------------------------------------------ stats and life cycle

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
    public synchronized FabricStats stats() {
        long written = retiredBytesWritten;
        long read = retiredBytesRead;
        for (ShmMemoryRegion r : regions.all()) {
            written += r.remoteBytesWritten();
            read += r.remoteBytesRead();
        }
        return new FabricStats(poller == null ? 0 : poller.cpuNanos(), 0, read, written);
    }

    /** Times a peer's doorbell woke or found this fabric's poller (0 before it started). */
    synchronized long doorbellWakeups() {
        return poller == null ? 0 : poller.doorbellWakeups();
    }

    /** Inbound records the poller thread handled outside its sleeps (0 before it started). */
    synchronized long pollerRecordsHandled() {
        return poller == null ? 0 : poller.recordsHandled();
    }

    /** The poller thread, if started (tests look at its CPU time). */
    synchronized Thread pollerThread() {
        return poller == null ? null : poller.thread();
    }

    private void checkOpen() {
        if (closed) {
            throw new FabricException("shm fabric is closed");
        }
    }

    @Override
    public void close() {
        Poller p;
        synchronized (this) {
            if (closed) {
                return;
            }
            closed = true;
            p = poller;
        }
        for (ShmListener l : listeners) {
            l.close();
        }
        if (p != null) {
            p.stop();
        }
        for (ShmEndpoint e : endpoints) {
            e.release();
        }
        synchronized (this) {
            for (ShmMemoryRegion r : regions.all()) {
                r.freezeCounters();
            }
            counters = null;
            homeArena.close();
            if (home != null) {
                ShmHome.delete(home, homeLock);
                ShmHome.closed(this);
            }
        }
    }
}
