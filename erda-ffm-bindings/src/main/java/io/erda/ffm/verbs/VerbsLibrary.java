package io.erda.ffm.verbs;

import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_BYTE;
import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;

import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.SymbolLookup;
import java.util.ArrayList;
import java.util.List;

/**
 * The exported control-path functions of libibverbs, bound through a pluggable {@link SymbolLookup}:
 * {@link #system()} is the real {@code libibverbs.so.1} (opened lazily, once, in a holder class);
 * {@code new VerbsLibrary(lookup)} takes any other lookup, e.g. a fake whose symbols are upcall stubs
 * ({@code io.erda.softrnic.FakeVerbsDevice}). Loading this class touches no native code.
 *
 * <p>Macro-wrapped functions bind what v44 exports: {@code ibv_reg_mr} is a macro over an inline
 * that calls {@code ibv_reg_mr_iova2} for non-constant access flags, so we bind
 * {@code ibv_reg_mr_iova2} with iova = addr. {@code ibv_query_port} is a macro over the inline
 * {@code ___ibv_query_port}; we call the exported compat symbol, which fills the leading (compat)
 * part of {@code struct ibv_port_attr}, after zeroing the whole struct as the inline does.
 *
 * <p>post_send, post_recv, poll_cq and req_notify_cq are static inline in verbs.h: see {@link VerbsOps}.
 * So is ibv_create_qp_ex ({@link #createQpEx}), through {@code verbs_context.create_qp_ex}.
 */
public final class VerbsLibrary {
    public static final String SONAME = "libibverbs.so.1";

    // Prototypes from <infiniband/verbs.h>; the FFM half of what jextract would put in Verbs.
    static final FunctionDescriptor IBV_GET_DEVICE_LIST = FunctionDescriptor.of(ADDRESS, ADDRESS);
    static final FunctionDescriptor IBV_FREE_DEVICE_LIST = FunctionDescriptor.ofVoid(ADDRESS);
    static final FunctionDescriptor IBV_GET_DEVICE_NAME = FunctionDescriptor.of(ADDRESS, ADDRESS);
    static final FunctionDescriptor IBV_OPEN_DEVICE = FunctionDescriptor.of(ADDRESS, ADDRESS);
    static final FunctionDescriptor IBV_CLOSE_DEVICE = FunctionDescriptor.of(JAVA_INT, ADDRESS);
    static final FunctionDescriptor IBV_QUERY_PORT = FunctionDescriptor.of(JAVA_INT, ADDRESS, JAVA_BYTE, ADDRESS);
    static final FunctionDescriptor IBV_QUERY_DEVICE = FunctionDescriptor.of(JAVA_INT, ADDRESS, ADDRESS);
    /**
     * int (*query_device_ex)(struct ibv_context *, const struct ibv_query_device_ex_input *, struct ibv_device_attr_ex *,
     * size_t), the verbs_context slot the inline ibv_query_device_ex calls.
     */
    public static final FunctionDescriptor QUERY_DEVICE_EX = FunctionDescriptor.of(JAVA_INT, ADDRESS, ADDRESS, ADDRESS, JAVA_LONG);
    static final FunctionDescriptor IBV_QUERY_GID = FunctionDescriptor.of(JAVA_INT, ADDRESS, JAVA_BYTE, JAVA_INT, ADDRESS);
    static final FunctionDescriptor IBV_ALLOC_PD = FunctionDescriptor.of(ADDRESS, ADDRESS);
    static final FunctionDescriptor IBV_DEALLOC_PD = FunctionDescriptor.of(JAVA_INT, ADDRESS);
    static final FunctionDescriptor IBV_REG_MR_IOVA2 =
            FunctionDescriptor.of(ADDRESS, ADDRESS, ADDRESS, JAVA_LONG, JAVA_LONG, JAVA_INT);
    static final FunctionDescriptor IBV_DEREG_MR = FunctionDescriptor.of(JAVA_INT, ADDRESS);
    static final FunctionDescriptor IBV_CREATE_COMP_CHANNEL = FunctionDescriptor.of(ADDRESS, ADDRESS);
    static final FunctionDescriptor IBV_DESTROY_COMP_CHANNEL = FunctionDescriptor.of(JAVA_INT, ADDRESS);
    static final FunctionDescriptor IBV_CREATE_CQ =
            FunctionDescriptor.of(ADDRESS, ADDRESS, JAVA_INT, ADDRESS, ADDRESS, JAVA_INT);
    static final FunctionDescriptor IBV_DESTROY_CQ = FunctionDescriptor.of(JAVA_INT, ADDRESS);
    static final FunctionDescriptor IBV_GET_CQ_EVENT = FunctionDescriptor.of(JAVA_INT, ADDRESS, ADDRESS, ADDRESS);
    static final FunctionDescriptor IBV_ACK_CQ_EVENTS = FunctionDescriptor.ofVoid(ADDRESS, JAVA_INT);
    static final FunctionDescriptor IBV_CREATE_QP = FunctionDescriptor.of(ADDRESS, ADDRESS, ADDRESS);
    static final FunctionDescriptor IBV_DESTROY_QP = FunctionDescriptor.of(JAVA_INT, ADDRESS);
    static final FunctionDescriptor IBV_MODIFY_QP = FunctionDescriptor.of(JAVA_INT, ADDRESS, ADDRESS, JAVA_INT);
    static final FunctionDescriptor IBV_QP_TO_QP_EX = FunctionDescriptor.of(ADDRESS, ADDRESS);
    /** struct ibv_qp *(*create_qp_ex)(struct ibv_context *, struct ibv_qp_init_attr_ex *), a verbs_context slot */
    public static final FunctionDescriptor CREATE_QP_EX = FunctionDescriptor.of(ADDRESS, ADDRESS, ADDRESS);

    /** Every symbol this class may resolve, for fakes and for diagnostics. */
    public static final List<String> SYMBOLS = List.of("ibv_get_device_list", "ibv_free_device_list",
            "ibv_get_device_name", "ibv_open_device", "ibv_close_device", "ibv_query_device", "ibv_query_port", "ibv_query_gid",
            "ibv_alloc_pd", "ibv_dealloc_pd", "ibv_reg_mr_iova2", "ibv_dereg_mr", "ibv_create_comp_channel",
            "ibv_destroy_comp_channel", "ibv_create_cq", "ibv_destroy_cq", "ibv_get_cq_event",
            "ibv_ack_cq_events", "ibv_create_qp", "ibv_destroy_qp", "ibv_modify_qp", "ibv_qp_to_qp_ex");

    /**
     * {@code int erda_soft_rnic_set_write_delay(struct ibv_mr *mr, uint64_t nanos_per_line)}: an extension symbol
     * that only the in-JVM software RNIC ({@code io.erda.softrnic.SoftRnicDevice}) exports, in the spirit of
     * a provider's direct-verbs symbols. It applies the PM write-latency model to a registration; a real RNIC writes
     * memory itself and cannot, so the real libibverbs has no such symbol.
     */
    public static final String SOFT_RNIC_WRITE_DELAY = "erda_soft_rnic_set_write_delay";
    public static final FunctionDescriptor SOFT_RNIC_WRITE_DELAY_DESC = FunctionDescriptor.of(JAVA_INT, ADDRESS, JAVA_LONG);
    /**
     * {@code int erda_soft_rnic_set_durable_mirror(struct ibv_mr *mr, void *mirror, uint64_t length, int64_t *lock)}:
     * the software RNIC's other extension symbol. Every one-sided WRITE or atomic the device places into the
     * registration is then also copied into {@code mirror} (as long as the registration), under the spin lock word
     * {@code lock}: the durable image of power-failure emulation.
     * A real RNIC places writes unseen, so the real libibverbs has no such symbol either.
     */
    public static final String SOFT_RNIC_DURABLE_MIRROR = "erda_soft_rnic_set_durable_mirror";
    public static final FunctionDescriptor SOFT_RNIC_DURABLE_MIRROR_DESC = FunctionDescriptor.of(JAVA_INT, ADDRESS,
            ADDRESS, JAVA_LONG, ADDRESS);

    /**
     * System property: {@code false} makes {@link #system()} call its data path through ordinary downcalls too
     * ({@link #criticalDataPath()}), for a provider whose post_send or poll_cq could block, and to measure the
     * difference; anything else, or unset, keeps critical downcalls.
     */
    public static final String CRITICAL_DOWNCALLS = "verbs.critical-downcalls";

    private final NativeLibrary lib;
    private final NativeCapabilities capabilities;
    private final boolean criticalDataPath;

    /** Any lookup; the rdma-core version is unknown, so no native ATOMIC_WRITE/FLUSH is claimed. */
    public VerbsLibrary(SymbolLookup lookup) {
        this(lookup, 0);
    }

    /**
     * A lookup that stands for rdma-core {@code rdmaCoreVersion} (e.g. 44), 0 if unknown. Its contexts' data-path
     * functions may be upcall stubs, so they are called through ordinary downcalls ({@link #criticalDataPath()}).
     */
    public VerbsLibrary(SymbolLookup lookup, int rdmaCoreVersion) {
        this(lookup, rdmaCoreVersion, false);
    }

    private VerbsLibrary(SymbolLookup lookup, int rdmaCoreVersion, boolean criticalDataPath) {
        this.lib = new NativeLibrary(SONAME, lookup);
        this.capabilities = NativeCapabilities.forVersion(rdmaCoreVersion);
        this.criticalDataPath = criticalDataPath;
    }

    private static final class SystemHolder {
        static final VerbsLibrary INSTANCE;
        static final RdmaUnavailableException FAILURE;

        static {
            VerbsLibrary library = null;
            RdmaUnavailableException failure = null;
            try {
                SymbolLookup lookup = NativeLibrary.openSystemLibrary(SONAME, "libibverbs1");
                library = new VerbsLibrary(lookup, NativeCapabilities.loadedRdmaCoreVersion("libibverbs.so.1."),
                        !"false".equals(System.getProperty(CRITICAL_DOWNCALLS)));
            } catch (RdmaUnavailableException e) {
                failure = e;
            }
            INSTANCE = library;
            FAILURE = failure;
        }
    }

    /** The installed libibverbs; RdmaUnavailableException if it cannot be loaded. */
    public static VerbsLibrary system() {
        if (SystemHolder.FAILURE != null) {
            throw new RdmaUnavailableException(SystemHolder.FAILURE.getMessage(), SystemHolder.FAILURE);
        }
        return SystemHolder.INSTANCE;
    }

    public NativeLibrary natives() {
        return lib;
    }

    public NativeCapabilities capabilities() {
        return capabilities;
    }

    /**
     * Whether poll_cq and post_send/post_recv of this library's contexts are called as critical downcalls
     * ({@link VerbsOps}): true for {@link #system()}, whose providers run them natively without calling back into
     * Java (unless {@value #CRITICAL_DOWNCALLS}{@code =false}); false for any other lookup, whose contexts (the
     * software RNIC) may answer them with upcall stubs.
     */
    public boolean criticalDataPath() {
        return criticalDataPath;
    }

    /** Convenience for {@code capabilities().nativeFlush()}. */
    public boolean supportsNativeFlush() {
        return capabilities.nativeFlush();
    }

    // ------------------------------------------------------------------ devices

    /**
     * Names of the RDMA devices, never empty: no device, or a kernel without RDMA support, raises
     * {@code RdmaUnavailableException("no RDMA device: ibv_get_device_list failed: Function not
     * implemented (ENOSYS)")} or {@code "no RDMA device: ibv_get_device_list found 0 devices"}.
     */
    public List<String> deviceNames() {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment list = deviceList(arena);
            try {
                List<String> names = new ArrayList<>();
                for (MemorySegment device : devices(list)) {
                    names.add(deviceName(device));
                }
                return names;
            } finally {
                lib.callRaw("ibv_free_device_list", IBV_FREE_DEVICE_LIST, list);
            }
        }
    }

    /** Opens the named device (null: the first one) and returns its {@code struct ibv_context *}. */
    public MemorySegment openDevice(String name) {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment list = deviceList(arena);
            try {
                List<String> seen = new ArrayList<>();
                for (MemorySegment device : devices(list)) {
                    String deviceName = deviceName(device);
                    if (name == null || name.equals(deviceName)) {
                        return lib.callPointer("ibv_open_device", IBV_OPEN_DEVICE, device)
                                .reinterpret(Verbs.ibv_context.byteSize());
                    }
                    seen.add(deviceName);
                }
                throw new RdmaUnavailableException("no RDMA device named " + name + " (found " + seen + ")");
            } finally {
                lib.callRaw("ibv_free_device_list", IBV_FREE_DEVICE_LIST, list);
            }
        }
    }

    private MemorySegment deviceList(Arena arena) {
        MemorySegment count = arena.allocate(JAVA_INT);
        NativeLibrary.PointerResult result =
                lib.callNullable("ibv_get_device_list", IBV_GET_DEVICE_LIST, count);
        if (result.pointer().equals(MemorySegment.NULL)) {
            throw new RdmaUnavailableException("no RDMA device: ibv_get_device_list failed: "
                    + Errno.describe(result.errno()));
        }
        int n = count.get(JAVA_INT, 0);
        if (n <= 0) {
            lib.callRaw("ibv_free_device_list", IBV_FREE_DEVICE_LIST, result.pointer());
            throw new RdmaUnavailableException("no RDMA device: ibv_get_device_list found 0 devices");
        }
        return result.pointer().reinterpret(ADDRESS.byteSize() * (n + 1L));
    }

    private static List<MemorySegment> devices(MemorySegment list) {
        List<MemorySegment> devices = new ArrayList<>();
        for (long i = 0; i < list.byteSize() / ADDRESS.byteSize(); i++) {
            MemorySegment device = list.getAtIndex(ADDRESS, i);
            if (device.equals(MemorySegment.NULL)) {
                break;
            }
            devices.add(device);
        }
        return devices;
    }

    private String deviceName(MemorySegment device) {
        return lib.callPointer("ibv_get_device_name", IBV_GET_DEVICE_NAME, device)
                .reinterpret(Verbs.IBV_SYSFS_NAME_MAX).getString(0);
    }

    /** The name of the device an open {@code struct ibv_context *} belongs to (e.g. one rdma_get_devices returned). */
    public String deviceNameOf(MemorySegment context) {
        return deviceName((MemorySegment) Verbs.ibv_context$device.get(context.reinterpret(Verbs.ibv_context.byteSize()), 0L));
    }

    public void closeDevice(MemorySegment context) {
        lib.callStatus("ibv_close_device", IBV_CLOSE_DEVICE, context);
    }

    // ------------------------------------------------------------------ control path

    /** Fills {@code attr} (an {@link Verbs#IBV_PORT_ATTR}); zeroes it first like ___ibv_query_port. */
    public void queryPort(MemorySegment context, int port, MemorySegment attr) {
        attr.fill((byte) 0);
        lib.callStatus("ibv_query_port", IBV_QUERY_PORT, context, (byte) port, attr);
    }

    /** Fills {@code attr} (a {@link Verbs#ibv_device_attr}). */
    public void queryDevice(MemorySegment context, MemorySegment attr) {
        attr.fill((byte) 0);
        lib.callStatus("ibv_query_device", IBV_QUERY_DEVICE, context, attr);
    }

    /**
     * ibv_query_device_ex, static inline in verbs.h and done the same way: the provider's
     * {@code verbs_context.query_device_ex} with an empty input. False when the provider has no such slot (its
     * extended attributes, device_cap_flags_ex among them, are then unknown); {@code attrEx} is zeroed first.
     */
    public boolean queryDeviceEx(MemorySegment context, MemorySegment attrEx) {
        attrEx.fill((byte) 0);
        MemorySegment function = IbvContext.extendedOp(context, Verbs.verbs_context$query_device_ex$OFFSET);
        if (function == null) {
            return false;
        }
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment input = arena.allocate(Verbs.ibv_query_device_ex_input);
            lib.callStatusAt("ibv_query_device_ex", function, QUERY_DEVICE_EX, context, input, attrEx, attrEx.byteSize());
        }
        return true;
    }

    public void queryGid(MemorySegment context, int port, int index, MemorySegment gid) {
        lib.callStatus("ibv_query_gid", IBV_QUERY_GID, context, (byte) port, index, gid);
    }

    public MemorySegment allocPd(MemorySegment context) {
        return lib.callPointer("ibv_alloc_pd", IBV_ALLOC_PD, context).reinterpret(Verbs.ibv_pd.byteSize());
    }

    public void deallocPd(MemorySegment pd) {
        lib.callStatus("ibv_dealloc_pd", IBV_DEALLOC_PD, pd);
    }

    /** ibv_reg_mr(pd, addr, length, access), as the v44 inline does it for run-time access flags. */
    public MemorySegment regMr(MemorySegment pd, MemorySegment memory, int access) {
        return lib.callPointer("ibv_reg_mr_iova2", IBV_REG_MR_IOVA2, pd, memory, memory.byteSize(),
                memory.address(), access).reinterpret(Verbs.ibv_mr.byteSize());
    }

    /** Whether the library can apply a write-latency model to registrations ({@link #SOFT_RNIC_WRITE_DELAY}). */
    public boolean supportsWriteDelay() {
        return lib.has(SOFT_RNIC_WRITE_DELAY);
    }

    public void setWriteDelay(MemorySegment mr, long nanosPerCacheLine) {
        lib.callStatus(SOFT_RNIC_WRITE_DELAY, SOFT_RNIC_WRITE_DELAY_DESC, mr, nanosPerCacheLine);
    }

    /** Whether the library can mirror one-sided writes into a second copy ({@link #SOFT_RNIC_DURABLE_MIRROR}). */
    public boolean supportsDurableMirror() {
        return lib.has(SOFT_RNIC_DURABLE_MIRROR);
    }

    public void setDurableMirror(MemorySegment mr, MemorySegment mirror, MemorySegment lock) {
        lib.callStatus(SOFT_RNIC_DURABLE_MIRROR, SOFT_RNIC_DURABLE_MIRROR_DESC, mr, mirror, mirror.byteSize(), lock);
    }

    public void deregMr(MemorySegment mr) {
        lib.callStatus("ibv_dereg_mr", IBV_DEREG_MR, mr);
    }

    public MemorySegment createCompChannel(MemorySegment context) {
        return lib.callPointer("ibv_create_comp_channel", IBV_CREATE_COMP_CHANNEL, context)
                .reinterpret(Verbs.ibv_comp_channel.byteSize());
    }

    public void destroyCompChannel(MemorySegment channel) {
        lib.callStatus("ibv_destroy_comp_channel", IBV_DESTROY_COMP_CHANNEL, channel);
    }

    /** @param channel a completion channel or {@link MemorySegment#NULL} for polling only */
    public MemorySegment createCq(MemorySegment context, int cqe, MemorySegment channel, int compVector) {
        return lib.callPointer("ibv_create_cq", IBV_CREATE_CQ, context, cqe, MemorySegment.NULL, channel,
                compVector).reinterpret(Verbs.ibv_cq.byteSize());
    }

    public void destroyCq(MemorySegment cq) {
        lib.callStatus("ibv_destroy_cq", IBV_DESTROY_CQ, cq);
    }

    /** Blocks on the channel; returns the {@code struct ibv_cq *} that has an event. */
    public MemorySegment getCqEvent(MemorySegment channel) {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment cq = arena.allocate(ADDRESS);
            MemorySegment cqContext = arena.allocate(ADDRESS);
            lib.callStatus("ibv_get_cq_event", IBV_GET_CQ_EVENT, channel, cq, cqContext);
            return cq.get(ADDRESS, 0).reinterpret(Verbs.ibv_cq.byteSize());
        }
    }

    public void ackCqEvents(MemorySegment cq, int events) {
        lib.callRaw("ibv_ack_cq_events", IBV_ACK_CQ_EVENTS, cq, events);
    }

    public MemorySegment createQp(MemorySegment pd, MemorySegment initAttr) {
        return lib.callPointer("ibv_create_qp", IBV_CREATE_QP, pd, initAttr).reinterpret(Verbs.ibv_qp.byteSize());
    }

    /**
     * ibv_create_qp_ex, static inline in verbs.h and done the same way here: a request with only
     * IBV_QP_INIT_ATTR_PD is an ibv_create_qp (the attr_ex starts with an ibv_qp_init_attr); anything else calls the
     * provider's {@code verbs_context.create_qp_ex}, and a provider without one fails with EOPNOTSUPP.
     */
    public MemorySegment createQpEx(MemorySegment context, MemorySegment attrEx) {
        int mask = (int) Verbs.ibv_qp_init_attr_ex$comp_mask.get(attrEx, 0L);
        if (mask == Verbs.IBV_QP_INIT_ATTR_PD) {
            return createQp((MemorySegment) Verbs.ibv_qp_init_attr_ex$pd.get(attrEx, 0L), attrEx);
        }
        MemorySegment function = IbvContext.extendedOp(context, Verbs.verbs_context$create_qp_ex$OFFSET);
        if (function == null) {
            throw new VerbsException("ibv_create_qp_ex", 0, Errno.EOPNOTSUPP, "the provider's verbs_context has no create_qp_ex");
        }
        NativeLibrary.PointerResult qp = lib.callPointerAt("ibv_create_qp_ex", function, CREATE_QP_EX, context, attrEx);
        if (qp.pointer().equals(MemorySegment.NULL)) {
            throw VerbsException.nullReturn("ibv_create_qp_ex", qp.errno());
        }
        return qp.pointer().reinterpret(Verbs.ibv_qp.byteSize());
    }

    public void destroyQp(MemorySegment qp) {
        lib.callStatus("ibv_destroy_qp", IBV_DESTROY_QP, qp);
    }

    public void modifyQp(MemorySegment qp, MemorySegment attr, int mask) {
        lib.callStatus("ibv_modify_qp", IBV_MODIFY_QP, qp, attr, mask);
    }

    /** ibv_qp_to_qp_ex; NULL for a QP that was not created with ibv_create_qp_ex. */
    public MemorySegment qpToQpEx(MemorySegment qp) {
        return lib.callNullable("ibv_qp_to_qp_ex", IBV_QP_TO_QP_EX, qp).pointer().reinterpret(Verbs.ibv_qp_ex.byteSize());
    }

    /** The send operations this library may put in send_ops_flags: its {@link #capabilities()} plus the classic ones. */
    public long extendedSendOps() {
        long ops = Verbs.IBV_QP_EX_WITH_RDMA_WRITE | Verbs.IBV_QP_EX_WITH_RDMA_WRITE_WITH_IMM | Verbs.IBV_QP_EX_WITH_SEND
                | Verbs.IBV_QP_EX_WITH_RDMA_READ | Verbs.IBV_QP_EX_WITH_ATOMIC_CMP_AND_SWP
                | Verbs.IBV_QP_EX_WITH_ATOMIC_FETCH_AND_ADD;
        if (capabilities.nativeAtomicWrite()) {
            ops |= Verbs.IBV_QP_EX_WITH_ATOMIC_WRITE;
        }
        if (capabilities.nativeFlush()) {
            ops |= Verbs.ERDA_QP_EX_WITH_FLUSH;
        }
        return ops;
    }
}
