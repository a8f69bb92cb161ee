package io.erda.remotelog;

import io.erda.fabric.Access;
import io.erda.fabric.Backing;
import io.erda.fabric.ConnectionRequest;
import io.erda.fabric.Endpoint;
import io.erda.fabric.EndpointOptions;
import io.erda.fabric.Fabric;
import io.erda.fabric.FabricStats;
import io.erda.fabric.Listener;
import io.erda.fabric.MemoryRegion;
import io.erda.fabric.RegisterOptions;
import io.erda.ffm.libc.DeviceDax;

import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.net.URI;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import jdk.nio.mapmode.ExtendedMapMode;

/**
 * A remote log: a responder ({@link LogServer}) and a requester ({@link Appender}) in this process, each on its own
 * instance of one fabric provider, connected over the provider's real transport (tcp: sockets and the software RNIC's
 * engine thread; shm: shared files and rings; verbs: the device). The log is a file in the work directory, mapped
 * and registered for remote reads, writes and atomics; on tmpfs it is DRAM standing in for PM, as in the paper's
 * evaluation (§4.2). Or the log is the start of a device-DAX device ({@code /dev/daxN.M}, {@link DeviceDax}): PM with
 * no file system, which an RNIC that must pin what it registers (rxe) can register, unlike a file on a DAX file
 * system.
 */
public final class RemoteLog implements AutoCloseable {
    private final Arena arena = Arena.ofShared();
    private final LogLayout layout;
    private Fabric target;
    private Fabric initiator;
    private Listener listener;
    private MemoryRegion log;
    private boolean syncMapped;
    private String logMapping = "log not mapped";
    private MemoryRegion receiveBuffers;
    private DeviceDax device;
    private LogServer server;
    private Appender appender;
    private Endpoint requesterEndpoint;
    private Endpoint responderEndpoint;

    private RemoteLog(LogLayout layout) {
        this.layout = layout;
    }

    /** Opens both sides on {@code scheme} (tcp, shm, verbs) with the log in {@code work}. */
    public static RemoteLog open(String scheme, Path work, LogLayout layout) throws IOException, InterruptedException {
        return open(scheme, work, layout, Map.of());
    }

    /** As {@link #open(String, Path, LogLayout)}, with provider properties (verbs: {@code verbs.device}). */
    public static RemoteLog open(String scheme, Path work, LogLayout layout, Map<String, String> properties)
            throws IOException, InterruptedException {
        return open(scheme, work, layout, properties, null);
    }

    /**
     * As {@link #open(String, Path, LogLayout, Map)}, with the log at the start of the device-DAX device
     * {@code logDevice} (null: a file in {@code work}), zeroed first. Not on shm, which shares the log by its file.
     *
     * @throws IllegalArgumentException if {@code logDevice} is given on shm, or is no device-DAX device, or is
     *                                  smaller than the log, naming the value and the limit
     */
    public static RemoteLog open(String scheme, Path work, LogLayout layout, Map<String, String> properties,
                                 Path logDevice) throws IOException, InterruptedException {
        if (logDevice != null && scheme.equals("shm")) {
            throw new IllegalArgumentException("a log on the device-DAX device " + logDevice + " needs a network"
                    + " fabric (tcp, verbs): shm maps the log in the peer by its file, which FileChannel cannot do for"
                    + " a character device");
        }
        RemoteLog r = new RemoteLog(layout);
        try {
            URI uri = switch (scheme) {
                case "shm" -> URI.create("shm://" + work.toAbsolutePath());
                default -> URI.create(scheme + "://127.0.0.1:0");
            };
            r.target = Fabric.open(uri, properties);
            r.initiator = Fabric.open(uri, properties);
            r.listener = r.target.listen(uri);
            r.log = logDevice == null ? r.mapLog(work.resolve("remotelog.pm")) : r.mapDevice(logDevice);
            r.receiveBuffers = LogServer.receiveBuffers(r.target, layout.recordSize(), r.arena);
            r.connect();
            return r;
        } catch (IOException | InterruptedException | RuntimeException e) {
            r.close();
            throw e;
        }
    }

    /**
     * Maps the log as the store maps its PM files: MAP_SYNC where the kernel grants it (a DAX file system; the
     * responder's write-back, {@code MemorySegment.force}, is then a cache-line write-back), else a shared mapping
     * (msync; on tmpfs nothing to write back).
     */
    private MemoryRegion mapLog(Path file) throws IOException {
        MemorySegment segment;
        try (FileChannel ch = FileChannel.open(file, StandardOpenOption.CREATE, StandardOpenOption.READ,
                StandardOpenOption.WRITE)) {
            ch.truncate(0);
            ch.truncate(layout.byteSize());
            try {
                segment = ch.map(ExtendedMapMode.READ_WRITE_SYNC, 0, layout.byteSize(), arena);
                syncMapped = true;
            } catch (UnsupportedOperationException | IOException notDax) {
                segment = ch.map(FileChannel.MapMode.READ_WRITE, 0, layout.byteSize(), arena);
            }
        }
        String type;
        try {
            type = Files.getFileStore(file).type();
        } catch (IOException e) {
            type = "?";
        }
        logMapping = "log " + file + " on " + type + ", " + (syncMapped
                ? "MAP_SYNC (DAX): a write-back is a cache-line write-back" : "a shared mapping: a write-back is msync");
        return target.register(segment, RegisterOptions.of(Access.all()).withBacking(new Backing(file, 0)));
    }

    /**
     * Maps the log at the start of the device-DAX device {@code path}, in whole multiples of its alignment, zeroes it
     * (the device keeps what an earlier run left) and registers it. The responder's write-back there is a fence only
     * ({@link LogServer}): the cache-line write-back the JDK has, {@code MemorySegment.force} of a MAP_SYNC
     * mapping, applies to FileChannel's mappings only, and msync is refused on device-DAX (it has no fsync).
     */
    private MemoryRegion mapDevice(Path path) {
        long alignment = DeviceDax.geometry(path).alignment();
        long length = (layout.byteSize() + alignment - 1) / alignment * alignment;
        device = DeviceDax.map(path, length);
        MemorySegment segment = device.segment().asSlice(0, layout.byteSize());
        segment.fill((byte) 0);
        syncMapped = device.syncMapped();
        logMapping = "log " + path + " (device-DAX, " + length + " bytes mapped in " + alignment + "-byte alignment, "
                + (syncMapped ? "MAP_SYNC" : "a shared mapping") + "): a write-back is a fence only, no cache-line"
                + " write-back (the JDK's, MemorySegment.force, is for FileChannel's mappings; msync is EINVAL here)";
        return target.register(segment, RegisterOptions.of(Access.all()));
    }

    /** Where the log is and what the responder's write-back does there. */
    public String logMapping() {
        return logMapping;
    }

    private void connect() throws InterruptedException {
        // a requester that Sends without waiting for an answer may find every buffer in use for a moment: it waits
        // for the responder to repost rather than fail (the paper's caution on recycling receive buffers, §4.3)
        EndpointOptions options = new EndpointOptions(null, null, EndpointOptions.DEFAULT_MAX_WR,
                LogServer.RECEIVE_BUFFERS, Duration.ofSeconds(10), EndpointOptions.DEFAULT_CONNECT_TIMEOUT);
        requesterEndpoint = initiator.createEndpoint(options);
        Thread connector = Thread.ofPlatform().name("remotelog-connect")
                .start(() -> requesterEndpoint.connect(listener.uri(), new byte[0]));
        ConnectionRequest request = listener.accept(10, TimeUnit.SECONDS);
        if (request == null) {
            throw new IllegalStateException("no connection request within 10 s on " + listener.uri());
        }
        responderEndpoint = target.createEndpoint(options);
        LogServer.postReceives(responderEndpoint, receiveBuffers, layout.recordSize());
        request.accept(responderEndpoint, new byte[0]);
        connector.join();
        server = new LogServer(responderEndpoint, layout, log, receiveBuffers, arena);
        appender = new Appender(requesterEndpoint, layout, log.descriptor(), arena);
    }

    public LogLayout layout() {
        return layout;
    }

    public LogServer server() {
        return server;
    }

    public Appender appender() {
        return appender;
    }

    /** The responder side's provider threads' work so far (tcp: the software RNIC's engine). */
    public FabricStats responderStats() {
        return target.stats();
    }

    /** How this fabric executes the taxonomy's FLUSH and Write_atomic: natively, or as which emulation. */
    public String operations() {
        var caps = initiator.capabilities();
        return "FLUSH: " + (caps.nativeFlush() ? "the device's own" : "a READ (the paper's emulation, section 3.4)")
                + "; Write_atomic: " + (caps.atomicWrite() ? "the device's ATOMIC_WRITE"
                : "none (write-flush-atomic-flush waits for the first FLUSH instead)")
                + (initiator.scheme().equals("verbs")
                ? "; a completion means what the transport says: received on InfiniBand and RoCE, only sent on iWARP"
                + " (run with --transport iwarp there: WSP then needs a FLUSH too, section 3.2)"
                : "; a request completes after the responder executed it, so a completion means it was received, as"
                + " on InfiniBand and RoCE");
    }

    public String device() {
        return initiator.capabilities().device();
    }

    /** Both sides tell {@code memory} (null: nobody) what they do from now on. */
    public void attach(ResponderMemory memory) {
        appender.attach(memory);
        server.attach(memory);
    }

    @Override
    public void close() {
        for (AutoCloseable c : new AutoCloseable[] {appender, server, requesterEndpoint, responderEndpoint, listener,
                initiator, target}) {
            if (c != null) {
                try {
                    c.close();
                } catch (Exception ignored) {
                    // closing the rest matters more
                }
            }
        }
        arena.close();
        if (device != null) {
            device.close(); // after the fabrics deregistered it
        }
    }
}
