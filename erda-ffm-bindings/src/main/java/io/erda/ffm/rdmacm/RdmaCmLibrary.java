package io.erda.ffm.rdmacm;

import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_INT;

import io.erda.ffm.verbs.NativeLibrary;
import io.erda.ffm.verbs.RdmaUnavailableException;
import io.erda.ffm.verbs.Verbs;
import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.SymbolLookup;
import java.net.Inet4Address;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;

/**
 * librdmacm connection set-up, bound just far enough for the verbs provider: event channel, cm_id,
 * resolve address/route, connect/listen/accept, events, and rdma_create_qp on the id. Untested on
 * this host (no RDMA kernel support); the layouts are checked by LayoutConformanceTest. Same
 * pattern as {@link io.erda.ffm.verbs.VerbsLibrary}: pluggable lookup, {@link #system()} in a holder.
 *
 * <p>Typical active side: createEventChannel → createId → resolveAddr, await ADDR_RESOLVED →
 * resolveRoute, await ROUTE_RESOLVED → createQp (id.verbs is the ibv_context) → connect, await
 * ESTABLISHED. Passive: createId → bindAddr → listen → CONNECT_REQUEST (event.id is the new id) →
 * createQp → accept → ESTABLISHED. Every event must be acknowledged with {@link #ackEvent}.
 */
public final class RdmaCmLibrary {
    public static final String SONAME = "librdmacm.so.1";

    private static final FunctionDescriptor PTR_VOID = FunctionDescriptor.of(ADDRESS);
    private static final FunctionDescriptor VOID_PTR = FunctionDescriptor.ofVoid(ADDRESS);
    private static final FunctionDescriptor INT_PTR = FunctionDescriptor.of(JAVA_INT, ADDRESS);
    private static final FunctionDescriptor INT_PTR_PTR = FunctionDescriptor.of(JAVA_INT, ADDRESS, ADDRESS);
    private static final FunctionDescriptor INT_PTR_INT = FunctionDescriptor.of(JAVA_INT, ADDRESS, JAVA_INT);
    private static final FunctionDescriptor INT_PTR_PTR_PTR = FunctionDescriptor.of(JAVA_INT, ADDRESS, ADDRESS, ADDRESS);
    /** int rdma_create_id(channel, struct rdma_cm_id **id, void *context, enum rdma_port_space ps) */
    private static final FunctionDescriptor CREATE_ID =
            FunctionDescriptor.of(JAVA_INT, ADDRESS, ADDRESS, ADDRESS, JAVA_INT);
    /** int rdma_resolve_addr(id, struct sockaddr *src, struct sockaddr *dst, int timeout_ms) */
    private static final FunctionDescriptor RESOLVE_ADDR =
            FunctionDescriptor.of(JAVA_INT, ADDRESS, ADDRESS, ADDRESS, JAVA_INT);

    private final NativeLibrary lib;

    public RdmaCmLibrary(SymbolLookup lookup) {
        this.lib = new NativeLibrary(SONAME, lookup);
    }

    private static final class SystemHolder {
        static final RdmaCmLibrary INSTANCE;
        static final RdmaUnavailableException FAILURE;

        static {
            RdmaCmLibrary library = null;
            RdmaUnavailableException failure = null;
            try {
                library = new RdmaCmLibrary(NativeLibrary.openSystemLibrary(SONAME, "librdmacm1"));
            } catch (RdmaUnavailableException e) {
                failure = e;
            }
            INSTANCE = library;
            FAILURE = failure;
        }
    }

    public static RdmaCmLibrary system() {
        if (SystemHolder.FAILURE != null) {
            throw new RdmaUnavailableException(SystemHolder.FAILURE.getMessage(), SystemHolder.FAILURE);
        }
        return SystemHolder.INSTANCE;
    }

    public MemorySegment createEventChannel() {
        return lib.callPointer("rdma_create_event_channel", PTR_VOID).reinterpret(RdmaCma.rdma_event_channel.byteSize());
    }

    public void destroyEventChannel(MemorySegment channel) {
        lib.callRaw("rdma_destroy_event_channel", VOID_PTR, channel);
    }

    /** A reliable-connected (RDMA_PS_TCP) id on {@code channel}. */
    public MemorySegment createId(MemorySegment channel) {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment id = arena.allocate(ADDRESS);
            lib.callStatus("rdma_create_id", CREATE_ID, channel, id, MemorySegment.NULL, RdmaCma.RDMA_PS_TCP);
            return id.get(ADDRESS, 0).reinterpret(RdmaCma.rdma_cm_id.byteSize());
        }
    }

    public void destroyId(MemorySegment id) {
        lib.callStatus("rdma_destroy_id", INT_PTR, id);
    }

    public void bindAddr(MemorySegment id, InetSocketAddress address) {
        try (Arena arena = Arena.ofConfined()) {
            lib.callStatus("rdma_bind_addr", INT_PTR_PTR, id, sockaddrIn(arena, address));
        }
    }

    public void listen(MemorySegment id, int backlog) {
        lib.callStatus("rdma_listen", INT_PTR_INT, id, backlog);
    }

    public void resolveAddr(MemorySegment id, InetSocketAddress destination, int timeoutMillis) {
        try (Arena arena = Arena.ofConfined()) {
            lib.callStatus("rdma_resolve_addr", RESOLVE_ADDR, id, MemorySegment.NULL,
                    sockaddrIn(arena, destination), timeoutMillis);
        }
    }

    public void resolveRoute(MemorySegment id, int timeoutMillis) {
        lib.callStatus("rdma_resolve_route", INT_PTR_INT, id, timeoutMillis);
    }

    /** rdma_create_qp(id, pd, init_attr): the QP lands in {@code id->qp}. */
    public MemorySegment createQp(MemorySegment id, MemorySegment pd, MemorySegment initAttr) {
        lib.callStatus("rdma_create_qp", INT_PTR_PTR_PTR, id, pd, initAttr);
        return ((MemorySegment) RdmaCma.rdma_cm_id$qp.get(id, 0L)).reinterpret(Verbs.ibv_qp.byteSize());
    }

    /** @param param a {@link RdmaCma#rdma_conn_param}, see {@link #connectionParameters} */
    public void connect(MemorySegment id, MemorySegment param) {
        lib.callStatus("rdma_connect", INT_PTR_PTR, id, param);
    }

    public void accept(MemorySegment id, MemorySegment param) {
        lib.callStatus("rdma_accept", INT_PTR_PTR, id, param);
    }

    public void disconnect(MemorySegment id) {
        lib.callStatus("rdma_disconnect", INT_PTR, id);
    }

    /** Blocks for the next event on the channel. */
    public CmEvent getEvent(MemorySegment channel) {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment event = arena.allocate(ADDRESS);
            lib.callStatus("rdma_get_cm_event", INT_PTR_PTR, channel, event);
            return CmEvent.decode(event.get(ADDRESS, 0).reinterpret(RdmaCma.rdma_cm_event.byteSize()));
        }
    }

    public void ackEvent(CmEvent event) {
        lib.callStatus("rdma_ack_cm_event", INT_PTR, event.segment());
    }

    /** A {@code struct rdma_conn_param} with private data (at most 56 bytes on connect, per the CM spec). */
    public static MemorySegment connectionParameters(Arena arena, byte[] privateData, int rdAtomic) {
        MemorySegment param = arena.allocate(RdmaCma.rdma_conn_param);
        MemorySegment data = arena.allocate(Math.max(1, privateData.length));
        MemorySegment.copy(MemorySegment.ofArray(privateData), 0, data, 0, privateData.length);
        RdmaCma.rdma_conn_param$private_data.set(param, 0L, data);
        RdmaCma.rdma_conn_param$private_data_len.set(param, 0L, (byte) privateData.length);
        RdmaCma.rdma_conn_param$responder_resources.set(param, 0L, (byte) rdAtomic);
        RdmaCma.rdma_conn_param$initiator_depth.set(param, 0L, (byte) rdAtomic);
        RdmaCma.rdma_conn_param$retry_count.set(param, 0L, (byte) 7);
        RdmaCma.rdma_conn_param$rnr_retry_count.set(param, 0L, (byte) 7);
        return param;
    }

    /** An IPv4 {@code struct sockaddr_in} (port and address in network order). */
    public static MemorySegment sockaddrIn(Arena arena, InetSocketAddress address) {
        if (!(address.getAddress() instanceof Inet4Address v4)) {
            throw new IllegalArgumentException("rdma_cm binding supports IPv4 only, got " + address);
        }
        MemorySegment sa = arena.allocate(RdmaCma.sockaddr_in);
        RdmaCma.sockaddr_in$sin_family.set(sa, 0L, (short) RdmaCma.AF_INET);
        RdmaCma.sockaddr_in$sin_port.set(sa, 0L, Short.reverseBytes((short) address.getPort()));
        RdmaCma.sockaddr_in$sin_addr.set(sa, 0L,
                ByteBuffer.wrap(v4.getAddress()).order(ByteOrder.nativeOrder()).getInt());
        return sa;
    }
}
