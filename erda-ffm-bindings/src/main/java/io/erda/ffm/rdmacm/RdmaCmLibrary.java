package io.erda.ffm.rdmacm;

import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_INT;

import io.erda.ffm.verbs.NativeLibrary;
import io.erda.ffm.verbs.QueuePair;
import io.erda.ffm.verbs.RdmaUnavailableException;
import io.erda.ffm.verbs.Verbs;
import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.SymbolLookup;
import java.lang.invoke.MethodHandle;
import java.net.Inet4Address;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.UnknownHostException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.ArrayList;
import java.util.List;
import java.util.function.ToIntFunction;

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
    private static final FunctionDescriptor PTR_PTR = FunctionDescriptor.of(ADDRESS, ADDRESS);
    private static final FunctionDescriptor INT_PTR_INT = FunctionDescriptor.of(JAVA_INT, ADDRESS, JAVA_INT);
    private static final FunctionDescriptor INT_PTR_PTR_PTR = FunctionDescriptor.of(JAVA_INT, ADDRESS, ADDRESS, ADDRESS);
    /** int rdma_create_id(channel, struct rdma_cm_id **id, void *context, enum rdma_port_space ps) */
    private static final FunctionDescriptor CREATE_ID =
            FunctionDescriptor.of(JAVA_INT, ADDRESS, ADDRESS, ADDRESS, JAVA_INT);
    /** int rdma_resolve_addr(id, struct sockaddr *src, struct sockaddr *dst, int timeout_ms) */
    private static final FunctionDescriptor RESOLVE_ADDR =
            FunctionDescriptor.of(JAVA_INT, ADDRESS, ADDRESS, ADDRESS, JAVA_INT);

    /** int rdma_reject(id, const void *private_data, uint8_t private_data_len) */
    private static final FunctionDescriptor REJECT =
            FunctionDescriptor.of(JAVA_INT, ADDRESS, ADDRESS, java.lang.foreign.ValueLayout.JAVA_BYTE);
    /** __be16 rdma_get_src_port(id) */
    private static final FunctionDescriptor SHORT_PTR = FunctionDescriptor.of(java.lang.foreign.ValueLayout.JAVA_SHORT, ADDRESS);
    /** int poll(struct pollfd *fds, nfds_t nfds, int timeout) of libc, to wait for the channel's fd with a timeout. */
    private static final MethodHandle POLL = Linker.nativeLinker().downcallHandle(
            Linker.nativeLinker().defaultLookup().findOrThrow("poll"),
            FunctionDescriptor.of(JAVA_INT, ADDRESS, java.lang.foreign.ValueLayout.JAVA_LONG, JAVA_INT));
    private static final short POLLIN = 1;
    /** rdma_conn_param's responder_resources / initiator_depth: "as many as the device allows". */
    public static final int RDMA_MAX_RESP_RES = 0xFF;
    public static final int RDMA_MAX_INIT_DEPTH = 0xFF;
    /** REJECTED status when the peer's application called rdma_reject (IB_CM_REJ_CONSUMER_DEFINED). */
    public static final int REJECT_CONSUMER_DEFINED = 28;

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

    /** rdma_reject with {@code privateData} (at most 148 bytes on InfiniBand, per the CM REJ message). */
    public void reject(MemorySegment id, byte[] privateData) {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment data = arena.allocate(Math.max(1, privateData.length));
            MemorySegment.copy(MemorySegment.ofArray(privateData), 0, data, 0, privateData.length);
            lib.callStatus("rdma_reject", REJECT, id, data, (byte) privateData.length);
        }
    }

    /** rdma_establish: the active side's answer to CONNECT_RESPONSE when it moves its QP itself. */
    public void establish(MemorySegment id) {
        lib.callStatus("rdma_establish", INT_PTR, id);
    }

    /**
     * Moves {@code qp} (one of the application's, not made by rdma_create_qp) to {@code state} with the attributes
     * rdma_cm resolved for {@code id} (rdma_init_qp_attr: port, path, peer QP number and PSN, ...); {@code adjust}
     * may change attributes first and returns mask bits to add.
     */
    public void modifyQp(MemorySegment id, QueuePair qp, int state, ToIntFunction<MemorySegment> adjust) {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment attr = arena.allocate(Verbs.ibv_qp_attr);
            MemorySegment mask = arena.allocate(JAVA_INT);
            Verbs.ibv_qp_attr$qp_state.set(attr, 0L, state);
            lib.callStatus("rdma_init_qp_attr", INT_PTR_PTR_PTR, id, attr, mask);
            qp.modify(attr, mask.get(JAVA_INT, 0) | adjust.applyAsInt(attr));
        }
    }

    /** The local port an id is bound to (a listener bound to port 0 learns its port here). */
    public int sourcePort(MemorySegment id) {
        return Short.toUnsignedInt(Short.reverseBytes((short) lib.callRaw("rdma_get_src_port", SHORT_PTR, id)));
    }

    /**
     * The peer's address of a connected id, IPv4 only: what rdma_get_peer_addr returns. That is a static inline of
     * rdma_cma.h ({@code &id->route.addr.dst_addr}), not a symbol librdmacm exports, so it is read from the struct.
     */
    public InetSocketAddress peerAddress(MemorySegment id) {
        return decodeSockaddrIn(id.reinterpret(RdmaCma.rdma_cm_id.byteSize())
                .asSlice(RdmaCma.rdma_cm_id$route_addr_dst_addr$OFFSET, RdmaCma.sockaddr_in.byteSize()));
    }

    /**
     * The {@code struct ibv_context *} rdma_cm opened for each device (rdma_get_devices): resources made on one of
     * these can be used with an id whose {@code verbs} is the same context, as a QP connected through rdma_cm must.
     */
    public List<MemorySegment> devices() {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment count = arena.allocate(JAVA_INT);
            MemorySegment list = lib.callPointer("rdma_get_devices", PTR_PTR, count);
            int n = count.get(JAVA_INT, 0);
            List<MemorySegment> contexts = new ArrayList<>();
            MemorySegment all = list.reinterpret(ADDRESS.byteSize() * (n + 1L));
            for (int i = 0; i < n; i++) {
                contexts.add(all.getAtIndex(ADDRESS, i).reinterpret(Verbs.ibv_context.byteSize()));
            }
            lib.callRaw("rdma_free_devices", VOID_PTR, list);
            return contexts;
        }
    }

    /** The id's {@code struct ibv_context *} (NULL until an address binds it to a device). */
    public static MemorySegment verbsOf(MemorySegment id) {
        return (MemorySegment) RdmaCma.rdma_cm_id$verbs.get(id.reinterpret(RdmaCma.rdma_cm_id.byteSize()), 0L);
    }

    /**
     * Waits up to {@code timeoutMillis} for an event on the channel (poll on its fd), so that a thread reading events
     * can notice it should stop: a thread blocked in rdma_get_cm_event is not woken by closing the channel.
     */
    public static boolean awaitEvent(MemorySegment channel, int timeoutMillis) {
        int fd = (int) RdmaCma.rdma_event_channel$fd.get(channel.reinterpret(RdmaCma.rdma_event_channel.byteSize()), 0L);
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment pollfd = arena.allocate(8, 4);
            pollfd.set(JAVA_INT, 0, fd);
            pollfd.set(java.lang.foreign.ValueLayout.JAVA_SHORT, 4, POLLIN);
            int ready = (int) POLL.invokeExact(pollfd, 1L, timeoutMillis);
            return ready > 0;
        } catch (Throwable t) {
            throw new IllegalStateException("poll on the rdma_cm channel fd " + fd + " threw", t);
        }
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

    /**
     * A {@code struct rdma_conn_param} with private data (at most 56 bytes on connect, 196 on accept, per the IB CM
     * REQ and REP messages), responder resources and initiator depth "as the device allows", transport retries 7,
     * and {@code qpNum}: the application's QP (ignored by librdmacm when the id has a QP of rdma_create_qp).
     *
     * @param rnrRetry the RNR retry count the CM message carries (the IB CM hands it to the receiver's QP; a QP the
     *                 application moves itself sets its own rnr_retry)
     */
    public static MemorySegment connectionParameters(Arena arena, byte[] privateData, int qpNum, int rnrRetry) {
        MemorySegment param = arena.allocate(RdmaCma.rdma_conn_param);
        MemorySegment data = arena.allocate(Math.max(1, privateData.length));
        MemorySegment.copy(MemorySegment.ofArray(privateData), 0, data, 0, privateData.length);
        RdmaCma.rdma_conn_param$private_data.set(param, 0L, data);
        RdmaCma.rdma_conn_param$private_data_len.set(param, 0L, (byte) privateData.length);
        RdmaCma.rdma_conn_param$responder_resources.set(param, 0L, (byte) RDMA_MAX_RESP_RES);
        RdmaCma.rdma_conn_param$initiator_depth.set(param, 0L, (byte) RDMA_MAX_INIT_DEPTH);
        RdmaCma.rdma_conn_param$retry_count.set(param, 0L, (byte) 7);
        RdmaCma.rdma_conn_param$rnr_retry_count.set(param, 0L, (byte) rnrRetry);
        RdmaCma.rdma_conn_param$qp_num.set(param, 0L, qpNum);
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

    /** The address and port of an IPv4 {@code struct sockaddr_in}. */
    public static InetSocketAddress decodeSockaddrIn(MemorySegment sa) {
        int port = Short.toUnsignedInt(Short.reverseBytes((short) RdmaCma.sockaddr_in$sin_port.get(sa, 0L)));
        int raw = (int) RdmaCma.sockaddr_in$sin_addr.get(sa, 0L);
        byte[] address = ByteBuffer.allocate(4).order(ByteOrder.nativeOrder()).putInt(raw).array();
        try {
            return new InetSocketAddress(InetAddress.getByAddress(address), port);
        } catch (UnknownHostException e) {
            throw new IllegalStateException("4 bytes are always an IPv4 address", e);
        }
    }
}
