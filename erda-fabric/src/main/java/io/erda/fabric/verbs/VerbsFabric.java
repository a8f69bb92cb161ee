package io.erda.fabric.verbs;

import io.erda.fabric.Completion;
import io.erda.fabric.CompletionQueue;
import io.erda.fabric.DurableMirror;
import io.erda.fabric.Endpoint;
import io.erda.fabric.EndpointOptions;
import io.erda.fabric.Fabric;
import io.erda.fabric.FabricCapabilities;
import io.erda.fabric.FabricException;
import io.erda.fabric.FabricStats;
import io.erda.fabric.Listener;
import io.erda.fabric.MemoryRegion;
import io.erda.fabric.RegisterOptions;
import io.erda.ffm.rdmacm.RdmaCmLibrary;
import io.erda.ffm.verbs.ConnectionParameters;
import io.erda.ffm.verbs.DeviceAttributes;
import io.erda.ffm.verbs.Errno;
import io.erda.ffm.verbs.NativeCapabilities;
import io.erda.ffm.verbs.IbvContext;
import io.erda.ffm.verbs.MemoryRegistration;
import io.erda.ffm.verbs.PortAttributes;
import io.erda.ffm.verbs.ProtectionDomain;
import io.erda.ffm.verbs.QueuePair;
import io.erda.ffm.verbs.QueuePairCapacity;
import io.erda.ffm.verbs.RdmaUnavailableException;
import io.erda.ffm.verbs.SoftwareRnic;
import io.erda.ffm.verbs.Verbs;
import io.erda.ffm.verbs.VerbsException;
import io.erda.ffm.verbs.VerbsLibrary;
import io.erda.ffm.verbs.WorkCompletions;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.net.URI;
import java.util.ArrayList;
import java.util.List;
import java.util.ServiceLoader;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * One opened RDMA device: its protection domain, registrations, completion queues and RC endpoints. Endpoints are
 * found by QP number when completions are polled. Completions are polled by whoever waits for them; with the TCP
 * side channel each connected endpoint parks one virtual thread on it, with rdma_cm ({@code verbs.cm=rdmacm}) the
 * fabric has one event thread ({@link CmEventChannel}).
 *
 * <p>With rdma_cm the device is one of the contexts rdma_cm itself opened (rdma_get_devices), so that an id bound to
 * it has the very context whose PD holds our QPs and registrations: one device, one PD per fabric. An id that
 * rdma_cm binds to another device (the route to a peer leaves by another RNIC) is refused, naming both.
 */
public final class VerbsFabric implements Fabric {
    /** Bytes read by an emulated FLUSH (see {@link VerbsEndpoint}). */
    static final int FLUSH_READ_LENGTH = 8;
    private static final System.Logger LOG = System.getLogger(VerbsFabric.class.getName());

    private final VerbsLibrary verbs;
    private final IbvContext context;
    private final AutoCloseable device;
    private final VerbsProperties properties;
    private final ProtectionDomain pd;
    private final int mtu;
    private final DeviceAttributes attributes;
    private final FabricCapabilities capabilities;
    private final Arena arena = Arena.ofShared();
    private final VerbsMemoryRegion flushScratch;
    private final ConcurrentHashMap<Integer, VerbsEndpoint> endpoints = new ConcurrentHashMap<>();
    /** Closed endpoints whose last completion a poller has just translated, to destroy outside the CQ's monitor. */
    private final ConcurrentLinkedQueue<VerbsEndpoint> drained = new ConcurrentLinkedQueue<>();
    private final List<VerbsMemoryRegion> regions = new CopyOnWriteArrayList<>();
    private final List<VerbsCompletionQueue> queues = new CopyOnWriteArrayList<>();
    private final List<Listener> listeners = new CopyOnWriteArrayList<>();
    /** The rdma_cm event channel, or null for the TCP side channel. */
    private final CmEventChannel cmEvents;
    private final AtomicBoolean writeDelayWarned = new AtomicBoolean();
    /** Why QPs are made without the extended send API; null while ibv_create_qp_ex with ATOMIC_WRITE still works. */
    private volatile String noExtendedOps;
    private final AtomicBoolean closed = new AtomicBoolean();

    private VerbsFabric(VerbsLibrary verbs, IbvContext context, AutoCloseable device, VerbsProperties properties,
                        RdmaCmLibrary cm) {
        this.verbs = verbs;
        this.context = context;
        this.device = device;
        this.properties = properties;
        PortAttributes port = context.queryPort(properties.port());
        if (port.state() != Verbs.IBV_PORT_ACTIVE) {
            throw new FabricException("port " + properties.port() + " of RDMA device " + deviceName()
                    + " is not active (state " + port.state() + "); check ibv_devinfo");
        }
        this.mtu = port.activeMtu();
        this.attributes = context.queryDevice();
        this.capabilities = capabilities(verbs, attributes, properties.soft() ? "soft (in-JVM software RNIC)"
                : verbs.deviceNameOf(context.segment()));
        this.pd = context.allocateProtectionDomain();
        this.flushScratch = register(arena.allocate(64, 64), RegisterOptions.local());
        this.cmEvents = cm == null ? null : new CmEventChannel(cm);
    }

    /**
     * Opens the device the properties name: the installed libibverbs and a real device, or the in-JVM software RNIC
     * for {@code verbs.device=soft}. A missing library, device or software RNIC is one FabricException that says why.
     */
    static VerbsFabric open(VerbsProperties properties) {
        if (properties.soft()) {
            SoftwareRnic rnic = softwareRnic(properties, VerbsFabric.class.getClassLoader());
            return openSoft(rnic, properties, rnic.rdmaCoreVersion());
        }
        IbvContext context;
        VerbsLibrary verbs;
        RdmaCmLibrary cm = null;
        try {
            verbs = VerbsLibrary.system();
            if (properties.rdmaCm()) {
                cm = RdmaCmLibrary.system();
                context = IbvContext.wrap(verbs, cmDevice(verbs, cm.devices(), properties.device()));
            } else {
                context = IbvContext.open(verbs, properties.device());
            }
        } catch (RdmaUnavailableException | VerbsException e) {
            throw new FabricException("verbs provider unavailable: " + e.getMessage()
                    + " (for tests without an RNIC: " + VerbsProperties.DEVICE + "=" + VerbsProperties.SOFT_DEVICE + ")", e);
        }
        return openOn(verbs, context, null, properties, cm);
    }

    /** The context rdma_cm opened for the named device (null: its first). */
    private static MemorySegment cmDevice(VerbsLibrary verbs, List<MemorySegment> contexts, String name) {
        List<String> seen = new ArrayList<>();
        for (MemorySegment context : contexts) {
            String deviceName = verbs.deviceNameOf(context);
            if (name == null || name.equals(deviceName)) {
                return context;
            }
            seen.add(deviceName);
        }
        throw new RdmaUnavailableException("rdma_get_devices has no device named " + name + " (found " + seen + ")");
    }

    /** A software-RNIC device whose library claims rdma-core {@code rdmaCoreVersion} (tests: 0 = no extended ops). */
    static VerbsFabric openSoft(VerbsProperties properties, int rdmaCoreVersion) {
        return openSoft(softwareRnic(properties, VerbsFabric.class.getClassLoader()), properties, rdmaCoreVersion);
    }

    /**
     * The software RNIC of {@code verbs.device=soft}: the class {@code verbs.soft-rnic} names, else the first that
     * ServiceLoader finds. It lives in a test artifact, which production class paths lack; then say which to add.
     */
    static SoftwareRnic softwareRnic(VerbsProperties properties, ClassLoader loader) {
        String name = properties.softRnic();
        if (name == null) {
            return ServiceLoader.load(SoftwareRnic.class, loader).findFirst().orElseThrow(() -> new FabricException(
                    VerbsProperties.DEVICE + "=" + VerbsProperties.SOFT_DEVICE + " needs the in-JVM software RNIC,"
                    + " and no " + SoftwareRnic.class.getName() + " is on the class path: add " + SoftwareRnic.ARTIFACT
                    + " (test scope) to the dependencies"));
        }
        String named = VerbsProperties.SOFT_RNIC + "=" + name;
        try {
            return Class.forName(name, true, loader).asSubclass(SoftwareRnic.class).getConstructor().newInstance();
        } catch (ClassNotFoundException e) {
            throw new FabricException(named + ": no such class on the class path (is " + SoftwareRnic.ARTIFACT
                    + " a dependency?)", e);
        } catch (ClassCastException e) {
            throw new FabricException(named + " does not implement " + SoftwareRnic.class.getName(), e);
        } catch (ReflectiveOperationException e) {
            throw new FabricException(named + " cannot be made with a public no-argument constructor: " + e, e);
        }
    }

    private static VerbsFabric openSoft(SoftwareRnic rnic, VerbsProperties properties, int rdmaCoreVersion) {
        SoftwareRnic.Device device = rnic.newDevice();
        VerbsLibrary verbs = new VerbsLibrary(device.lookup(), rdmaCoreVersion);
        if (properties.rdmaCm()) {
            RdmaCmLibrary cm = new RdmaCmLibrary(device.lookup()); // the device's host has it as its only RNIC
            return openOn(verbs, IbvContext.wrap(verbs, cm.devices().getFirst()), device, properties, cm);
        }
        return openOn(verbs, IbvContext.wrap(verbs, device.context()), device, properties, null);
    }

    private static VerbsFabric openOn(VerbsLibrary verbs, IbvContext context, AutoCloseable device, VerbsProperties p,
                                      RdmaCmLibrary cm) {
        try {
            return new VerbsFabric(verbs, context, device, p, cm);
        } catch (RuntimeException e) {
            context.close();
            closeDevice(device);
            throw e instanceof FabricException f ? f : new FabricException("opening RDMA device " + p.device()
                    + " failed: " + e.getMessage(), e);
        }
    }

    /**
     * The device's limits and capabilities as the SPI states them: a native operation only where both the loaded
     * libibverbs (NativeCapabilities) and the device (device_cap_flags_ex, atomic_cap) have it.
     */
    private static FabricCapabilities capabilities(VerbsLibrary verbs, DeviceAttributes a, String name) {
        NativeCapabilities library = verbs.capabilities();
        String device = "RDMA device " + name + " (firmware " + (a.firmwareVersion().isEmpty() ? "?" : a.firmwareVersion())
                + ", " + a.atomicCapName() + ", rdma-core " + (library.rdmaCoreVersion() == 0 ? "unknown" : library.rdmaCoreVersion())
                + ", Linux " + System.getProperty("os.version") + ")";
        FabricCapabilities.Atomicity atomicity = switch (a.atomicCap()) {
            case Verbs.IBV_ATOMIC_GLOB -> FabricCapabilities.Atomicity.GLOBAL;
            case Verbs.IBV_ATOMIC_HCA -> FabricCapabilities.Atomicity.DEVICE;
            default -> FabricCapabilities.Atomicity.NONE;
        };
        return new FabricCapabilities(device, Math.max(1, a.maxCqe()), Math.max(1, a.maxQpWr()),
                library.nativeAtomicWrite() && a.atomicWrite(), atomicity,
                library.nativeFlush() && a.flushPersistent(), verbs.supportsWriteDelay(), false);
    }

    /**
     * Why a registration may have failed. EOPNOTSUPP for a file's memory is what the kernel answers when asked to pin
     * pages of a file on a DAX file system (fsdax) for good, as registration does (FOLL_LONGTERM): it cannot, since the
     * file system may move the blocks; only a device with on-demand paging registers such memory without pinning it.
     * Otherwise the usual cause is the locked-memory limit.
     */
    private static String registrationHint(RuntimeException e, RegisterOptions options) {
        if (e instanceof VerbsException v && v.errno() == Errno.EOPNOTSUPP && options.backing() != null) {
            return " (" + options.backing().file() + ": the kernel does not pin memory of a file on a DAX file system"
                    + " for RDMA unless the device pages on demand; put the file on tmpfs or map a device-DAX"
                    + " namespace)";
        }
        return " (is the locked-memory limit, ulimit -l, large enough?)";
    }

    @Override
    public FabricCapabilities capabilities() {
        return capabilities;
    }

    DeviceAttributes deviceAttributes() {
        return attributes;
    }

    /** What the loaded libibverbs can post natively (its rdma-core release). */
    NativeCapabilities libraryCapabilities() {
        return verbs.capabilities();
    }

    private String deviceName() {
        return properties.device() == null ? "(first)" : properties.device();
    }

    IbvContext context() {
        return context;
    }

    /** How long a waiter on one of this fabric's completion queues busy-polls before it yields (verbs.poll-spin-ns). */
    int pollSpinPolls() {
        return properties.pollSpinPolls();
    }

    long pollSpinNanos() {
        return properties.pollSpinNanos();
    }

    /** The rdma_cm event channel, or null when connections are set up over the TCP side channel. */
    CmEventChannel cmEvents() {
        return cmEvents;
    }

    /** Refuses an rdma_cm id bound to another device than ours: our PD, QPs and registrations live on ours. */
    void checkSameDevice(MemorySegment idContext, String what) {
        if (idContext.address() != context.segment().address()) {
            throw new FabricException(what + " is bound by rdma_cm to device context 0x"
                    + Long.toHexString(idContext.address()) + ", but this fabric's protection domain is on "
                    + deviceName() + " (0x" + Long.toHexString(context.segment().address()) + "); set "
                    + VerbsProperties.DEVICE + " to the RNIC that reaches the peer");
        }
    }

    MemoryRegion flushScratch() {
        return flushScratch;
    }

    /** Connection attributes: RNR timer for our RTR (chosen by the peer), RNR retry for our RTS (ours). */
    ConnectionParameters connectionParameters(int minRnrTimer, int rnrRetry) {
        return new ConnectionParameters(properties.port(), properties.gidIndex(), mtu,
                Verbs.IBV_ACCESS_LOCAL_WRITE | Verbs.IBV_ACCESS_REMOTE_READ | Verbs.IBV_ACCESS_REMOTE_WRITE
                        | Verbs.IBV_ACCESS_REMOTE_ATOMIC,
                16, minRnrTimer, 14, 7, rnrRetry);
    }

    @Override
    public String scheme() {
        return "verbs";
    }

    @Override
    public VerbsMemoryRegion register(MemorySegment segment, RegisterOptions options) throws FabricException {
        ensureOpen();
        MemoryRegistration registration;
        try {
            int access = WcStatus.accessFlags(options.access());
            if (capabilities.nativeFlush() && (access & Verbs.IBV_ACCESS_REMOTE_READ) != 0) {
                access |= Verbs.ERDA_ACCESS_FLUSH_PERSISTENT; // native FLUSH replaces the READ that emulated it
            }
            registration = pd.register(segment, access);
        } catch (VerbsException | IllegalArgumentException e) {
            throw new FabricException("registering " + segment.byteSize() + " bytes at 0x"
                    + Long.toHexString(segment.address()) + " with " + options.access() + " failed: " + e.getMessage()
                    + registrationHint(e, options), e);
        }
        if (options.writeDelayNanosPerCacheLine() > 0) {
            if (verbs.supportsWriteDelay()) {
                verbs.setWriteDelay(registration.segment(), options.writeDelayNanosPerCacheLine());
            } else if (writeDelayWarned.compareAndSet(false, true)) {
                LOG.log(System.Logger.Level.WARNING, "write-latency model ({0} ns per line) ignored: the RNIC writes"
                        + " memory itself", options.writeDelayNanosPerCacheLine());
            }
        }
        if (options.durableMirror() != null) {
            String refused = null;
            try {
                options.durableMirror().requireFits(segment);
            } catch (IllegalArgumentException e) {
                refused = e.getMessage();
            }
            if (refused == null && !verbs.supportsDurableMirror()) {
                refused = "a durable mirror (power-failure emulation of writes durable on placement) needs a provider"
                        + " that places one-sided writes itself (tcp, shm, or verbs on the software RNIC): this RNIC"
                        + " writes memory unseen";
            }
            if (refused == null && options.durableMirror().durability() != DurableMirror.Durability.ON_PLACEMENT) {
                refused = "a durable mirror whose writes are durable " + options.durableMirror().durability()
                        .name().toLowerCase(java.util.Locale.ROOT).replace('_', ' ') + " needs the connection's later"
                        + " requests seen (tcp or shm): the software RNIC mirrors writes as it places them";
            }
            if (refused != null) {
                registration.close();
                throw new FabricException(refused);
            }
            verbs.setDurableMirror(registration.segment(), options.durableMirror().memory(),
                    options.durableMirror().lock());
        }
        VerbsMemoryRegion region = new VerbsMemoryRegion(this, registration, options);
        regions.add(region);
        return region;
    }

    void forget(VerbsMemoryRegion region) {
        regions.remove(region);
    }

    @Override
    public VerbsCompletionQueue createCompletionQueue(int capacity) throws FabricException {
        ensureOpen();
        if (capacity <= 0) {
            throw new IllegalArgumentException("completion queue capacity " + capacity + " must be positive");
        }
        capabilities.checkCompletionQueue(capacity);
        try {
            VerbsCompletionQueue queue = new VerbsCompletionQueue(this, context.createCompletionQueue(capacity, null), capacity);
            queues.add(queue);
            return queue;
        } catch (VerbsException e) {
            throw new FabricException("ibv_create_cq of " + capacity + " entries failed: " + e.getMessage(), e);
        }
    }

    @Override
    public Endpoint createEndpoint(EndpointOptions options) throws FabricException {
        ensureOpen();
        capabilities.checkQueueDepth("send queue", options.maxSendWr());
        capabilities.checkQueueDepth("receive queue", options.maxRecvWr());
        VerbsCompletionQueue send = queueOf(options.sendQueue(), options.maxSendWr());
        VerbsCompletionQueue recv = queueOf(options.recvQueue(), options.maxRecvWr());
        try {
            QueuePair qp = createQueuePair(nativeQueue(send), nativeQueue(recv),
                    QueuePairCapacity.of(options.maxSendWr(), options.maxRecvWr()));
            VerbsEndpoint endpoint = new VerbsEndpoint(this, qp, send, recv, options);
            endpoints.put(endpoint.qpNum(), endpoint);
            return endpoint;
        } catch (VerbsException e) {
            throw new FabricException("creating an RC queue pair (" + options.maxSendWr() + "/" + options.maxRecvWr()
                    + " work requests) failed: " + e.getMessage(), e);
        }
    }

    /**
     * A QP with the extended send API (ibv_create_qp_ex: ATOMIC_WRITE, and FLUSH where library and bindings have it)
     * when the library has ATOMIC_WRITE; a device that refuses those send ops gets, once and for the life of the
     * fabric, classic QPs (ibv_create_qp): FLUSH is then emulated and ATOMIC_WRITE refused (see VerbsEndpoint).
     */
    private QueuePair createQueuePair(io.erda.ffm.verbs.IbvCompletionQueue send, io.erda.ffm.verbs.IbvCompletionQueue recv,
                                      QueuePairCapacity capacity) {
        if (noExtendedOps == null && !capabilities.atomicWrite() && !capabilities.nativeFlush()) {
            noExtendedOps = "neither ATOMIC_WRITE nor native FLUSH is available on " + capabilities.device();
        }
        if (noExtendedOps == null) {
            long ops = verbs.extendedSendOps();
            if (!capabilities.atomicWrite()) {
                ops &= ~(long) Verbs.IBV_QP_EX_WITH_ATOMIC_WRITE;
            }
            if (!capabilities.nativeFlush()) {
                ops &= ~(long) Verbs.ERDA_QP_EX_WITH_FLUSH;
            }
            try {
                return pd.createQueuePairEx(send, recv, capacity, ops);
            } catch (VerbsException e) {
                if (e.errno() != Errno.EOPNOTSUPP && e.errno() != Errno.EINVAL) {
                    throw e;
                }
                if ((ops & Verbs.ERDA_QP_EX_WITH_FLUSH) != 0) {
                    try {
                        return pd.createQueuePairEx(send, recv, capacity, ops & ~(long) Verbs.ERDA_QP_EX_WITH_FLUSH);
                    } catch (VerbsException again) {
                        e = again;
                    }
                }
                noExtendedOps = "device " + deviceName() + " refused the extended send ops: " + e.getMessage();
                LOG.log(System.Logger.Level.INFO, "verbs: {0}; FLUSH is emulated by a READ, ATOMIC_WRITE refused",
                        noExtendedOps);
            }
        }
        return pd.createQueuePair(send, recv, capacity);
    }

    /** Why ATOMIC_WRITE cannot be posted (the error an endpoint throws): the device, or a QP without the op. */
    String atomicWriteRefusal() {
        if (!capabilities.atomicWrite()) {
            return capabilities.missing("ATOMIC_WRITE", verbs.capabilities().nativeAtomicWrite()
                    ? "IB_UVERBS_DEVICE_ATOMIC_WRITE in device_cap_flags_ex (rxe has it from Linux 6.2 on)"
                    : "rdma-core >= " + NativeCapabilities.ATOMIC_WRITE_SINCE + " (ibv_wr_atomic_write)");
        }
        return "ATOMIC_WRITE cannot be posted on this queue pair: " + noExtendedOps;
    }

    private VerbsCompletionQueue queueOf(CompletionQueue given, int depth) {
        if (given == null) {
            return createCompletionQueue(depth);
        }
        if (!(given instanceof VerbsCompletionQueue q) || q.fabric() != this) {
            throw new FabricException("completion queue " + given + " does not belong to this verbs fabric");
        }
        return q;
    }

    private io.erda.ffm.verbs.IbvCompletionQueue nativeQueue(VerbsCompletionQueue queue) {
        return queue.nativeQueue();
    }

    /** Entry {@code i} of a polled batch, through the endpoint that owns its QP; null if hidden or unknown. */
    Completion translate(WorkCompletions batch, int i) {
        VerbsEndpoint endpoint = endpoints.get(batch.qpNum(i));
        return endpoint == null ? null : endpoint.completed(batch, i);
    }

    /**
     * A shared completion queue is about to be destroyed: the QPs of closed endpoints that still wait on it for
     * their last completions (see {@link #closed}) go first, as verbs requires (ibv_destroy_cq of a CQ that a QP
     * still uses fails with EBUSY). Nobody will poll those completions now.
     */
    void queueClosing(VerbsCompletionQueue queue) {
        queues.remove(queue);
        destroyDrained();
        for (VerbsEndpoint e : endpoints.values()) {
            if (e.state() == Endpoint.State.CLOSED && e.uses(queue) && endpoints.remove(e.qpNum(), e)) {
                e.destroy();
            }
        }
    }

    /**
     * A closed endpoint's QP is destroyed now if nothing is outstanding; else it lingers until a poller has
     * translated its last completion ({@link #drainedAfterClose}), so the owner still gets its flushed requests back
     * (a server frees a reply's buffer on its completion), or until the fabric closes. Whoever takes it out of
     * {@code endpoints} destroys it.
     */
    void closed(VerbsEndpoint endpoint) {
        if (endpoint.drained() && endpoints.remove(endpoint.qpNum(), endpoint)) {
            endpoint.destroy();
        }
    }

    /**
     * Called by a poller, under a CQ's monitor, when it translated the last outstanding completion of a closed
     * endpoint: a long-running server's closed connections must not keep their QPs, CQs and registrations until it
     * exits. The QP is destroyed by {@link #destroyDrained}, once the poller has left the monitor (destroying it may
     * close the very CQ being polled).
     */
    void drainedAfterClose(VerbsEndpoint endpoint) {
        if (endpoints.remove(endpoint.qpNum(), endpoint)) {
            drained.add(endpoint);
        }
    }

    /** Queue pairs not destroyed yet: open endpoints, and closed ones that linger or wait in {@link #drained}. */
    int queuePairs() {
        return endpoints.size() + drained.size();
    }

    /** Destroys the endpoints {@link #drainedAfterClose} set aside; cheap when there are none (every poll calls it). */
    void destroyDrained() {
        if (drained.isEmpty()) {
            return;
        }
        VerbsEndpoint e;
        while ((e = drained.poll()) != null) {
            try {
                e.destroy();
            } catch (RuntimeException failure) {
                LOG.log(System.Logger.Level.WARNING, "destroying the drained queue pair 0x{0} failed: {1}",
                        Integer.toHexString(e.qpNum()), failure.toString());
            }
        }
    }

    @Override
    public Listener listen(URI uri) throws FabricException {
        ensureOpen();
        Listener listener = cmEvents != null ? RdmaCmListener.bind(this, cmEvents, uri) : VerbsListener.bind(this, uri);
        listeners.add(listener);
        return listener;
    }

    void forget(Listener listener) {
        listeners.remove(listener);
    }

    /** The RNIC executes one-sided operations: nothing of it runs, or is counted, in this process. */
    /** Counted by this instance's endpoints as they post ({@link Fabric#posted}). */
    final io.erda.fabric.PostedCounts posted = new io.erda.fabric.PostedCounts();

    @Override
    public java.util.Map<io.erda.fabric.Opcode, Long> posted() {
        return posted.snapshot();
    }

    @Override
    public FabricStats stats() {
        return FabricStats.ZERO;
    }

    @Override
    public List<MemoryRegion> regions() {
        return List.copyOf(regions);
    }

    private void ensureOpen() {
        if (closed.get()) {
            throw new FabricException("verbs fabric is closed");
        }
    }

    @Override
    public void close() {
        if (!closed.compareAndSet(false, true)) {
            return;
        }
        listeners.forEach(Listener::close);
        List<VerbsEndpoint> all = new ArrayList<>(endpoints.values());
        endpoints.clear();
        for (VerbsEndpoint e : all) {
            e.close();
            e.destroy();
        }
        destroyDrained();
        if (cmEvents != null) {
            cmEvents.close();
        }
        List.copyOf(queues).forEach(VerbsCompletionQueue::close); // each close removes its queue from the list
        regions.forEach(VerbsMemoryRegion::close);
        pd.close();
        context.close();
        closeDevice(device);
        arena.close();
    }

    private static void closeDevice(AutoCloseable device) {
        if (device != null) {
            try {
                device.close();
            } catch (Exception e) {
                throw new FabricException("closing the RDMA device failed: " + e.getMessage(), e);
            }
        }
    }
}
