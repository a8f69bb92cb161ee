package io.erda.softrnic;

import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_BYTE;
import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_SHORT;

import io.erda.ffm.rdmacm.RdmaCma;
import io.erda.ffm.rdmacm.RdmaCmLibrary;
import io.erda.ffm.verbs.Errno;
import io.erda.ffm.verbs.Verbs;
import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.MemorySegment;
import java.util.concurrent.ConcurrentHashMap;

/**
 * librdmacm for one {@link SoftRnicDevice}, as upcalls in the device's symbol lookup: the host that device sits in
 * has that one RNIC, so every id binds to it ({@code id->verbs} is the device's context, and rdma_get_devices lists
 * only it). Ids of all devices of a {@link SoftRnic} reach each other through its port table: any address resolves,
 * the port alone finds a listener.
 *
 * <p>The IB CM exchange is emulated with its sizes and statuses: rdma_connect is a REQ (private data padded to
 * 56 bytes, as the passive side sees it on InfiniBand), rdma_accept a REP (196), rdma_reject a REJ (148, status 28
 * "consumer defined"); a REQ to a port nobody listens on is rejected with status 8 (invalid service ID). The
 * active side gets CONNECT_RESPONSE and answers with rdma_establish (the RTU), which gives the passive side
 * ESTABLISHED: this fake supports QPs the application moves itself with rdma_init_qp_attr, not rdma_create_qp.
 * rdma_disconnect (or destroying a connected id) gives both sides DISCONNECTED once.
 *
 * <p>Events are {@code struct rdma_cm_event}s in native memory, freed by rdma_ack_cm_event. Every entry point is
 * an upcall: it never lets an exception out (recorded in the device's failures, returned as -1 with EINVAL).
 */
final class SoftRdmaCm implements AutoCloseable {
    /** One lock for the CM state of every id in the JVM: connection set-up is rare and crosses devices. */
    static final Object LOCK = new Object();
    private static final int REJECT_INVALID_SERVICE_ID = 8;
    private static final int REQ_PRIVATE_DATA = 56;
    private static final int REP_PRIVATE_DATA = 196;
    private static final int REJ_PRIVATE_DATA = 148;
    private static final int RD_ATOMIC = 16;
    private static final ConcurrentHashMap<Long, Arena> UNACKED = new ConcurrentHashMap<>();

    private final SoftRnicDevice device;
    private final Arena arena;
    private final MemorySegment deviceList;
    private final ConcurrentHashMap<Long, SoftCmChannel> channels = new ConcurrentHashMap<>();
    private final ConcurrentHashMap<Long, SoftCmId> ids = new ConcurrentHashMap<>();

    SoftRdmaCm(SoftRnicDevice device, Arena arena, UpcallStubs stubs) {
        this.device = device;
        this.arena = arena;
        this.deviceList = arena.allocate(ADDRESS, 2);
        deviceList.setAtIndex(ADDRESS, 0, device.context());
        FunctionDescriptor intPtr = FunctionDescriptor.of(JAVA_INT, ADDRESS);
        FunctionDescriptor intPtrPtr = FunctionDescriptor.of(JAVA_INT, ADDRESS, ADDRESS);
        FunctionDescriptor intPtrInt = FunctionDescriptor.of(JAVA_INT, ADDRESS, JAVA_INT);
        stubs.symbol("rdma_create_event_channel", this, "createEventChannel", FunctionDescriptor.of(ADDRESS));
        stubs.symbol("rdma_destroy_event_channel", this, "destroyEventChannel", FunctionDescriptor.ofVoid(ADDRESS));
        stubs.symbol("rdma_create_id", this, "createId", FunctionDescriptor.of(JAVA_INT, ADDRESS, ADDRESS, ADDRESS, JAVA_INT));
        stubs.symbol("rdma_destroy_id", this, "destroyId", intPtr);
        stubs.symbol("rdma_bind_addr", this, "bindAddr", intPtrPtr);
        stubs.symbol("rdma_listen", this, "listen", intPtrInt);
        stubs.symbol("rdma_get_src_port", this, "sourcePort", FunctionDescriptor.of(JAVA_SHORT, ADDRESS));
        stubs.symbol("rdma_resolve_addr", this, "resolveAddr", FunctionDescriptor.of(JAVA_INT, ADDRESS, ADDRESS, ADDRESS, JAVA_INT));
        stubs.symbol("rdma_resolve_route", this, "resolveRoute", intPtrInt);
        stubs.symbol("rdma_init_qp_attr", this, "initQpAttr", FunctionDescriptor.of(JAVA_INT, ADDRESS, ADDRESS, ADDRESS));
        stubs.symbol("rdma_connect", this, "connect", intPtrPtr);
        stubs.symbol("rdma_accept", this, "accept", intPtrPtr);
        stubs.symbol("rdma_reject", this, "reject", FunctionDescriptor.of(JAVA_INT, ADDRESS, ADDRESS, JAVA_BYTE));
        stubs.symbol("rdma_establish", this, "establish", intPtr);
        stubs.symbol("rdma_disconnect", this, "disconnect", intPtr);
        stubs.symbol("rdma_get_cm_event", this, "getEvent", intPtrPtr);
        stubs.symbol("rdma_ack_cm_event", this, "ackEvent", intPtr);
        stubs.symbol("rdma_get_devices", this, "getDevices", FunctionDescriptor.of(ADDRESS, ADDRESS));
        stubs.symbol("rdma_free_devices", this, "freeDevices", FunctionDescriptor.ofVoid(ADDRESS));
    }

    MemorySegment context() {
        return device.context();
    }

    private int fail(int errno) {
        UpcallStubs.setErrno(errno);
        return -1;
    }

    private int fail(Throwable t) {
        device.recordFailure(t);
        return fail(Errno.EINVAL);
    }

    private SoftCmId id(MemorySegment id) {
        SoftCmId found = ids.get(id.address());
        if (found == null) {
            throw new IllegalArgumentException("0x" + Long.toHexString(id.address()) + " is not an rdma_cm_id of this CM");
        }
        return found;
    }

    // ------------------------------------------------------------------ channels and events

    MemorySegment createEventChannel() {
        try {
            MemorySegment struct = arena.allocate(RdmaCma.rdma_event_channel);
            SoftCmChannel channel = new SoftCmChannel(struct);
            RdmaCma.rdma_event_channel$fd.set(struct, 0L, channel.fd());
            channels.put(struct.address(), channel);
            return struct;
        } catch (Throwable t) {
            fail(t);
            return MemorySegment.NULL;
        }
    }

    void destroyEventChannel(MemorySegment channel) {
        try {
            SoftCmChannel removed = channels.remove(channel.address());
            if (removed != null) {
                removed.close();
            }
        } catch (Throwable t) {
            device.recordFailure(t);
        }
    }

    /** Blocks the calling thread (the application's event thread) until an event is queued. */
    int getEvent(MemorySegment channel, MemorySegment eventOut) {
        try {
            SoftCmChannel ch = channels.get(channel.address());
            if (ch == null) {
                return fail(Errno.EINVAL);
            }
            SoftCmChannel.Event event = ch.take();
            UNACKED.put(event.struct().address(), event.arena());
            eventOut.reinterpret(ADDRESS.byteSize()).set(ADDRESS, 0, event.struct());
            return 0;
        } catch (Throwable t) {
            return fail(t);
        }
    }

    int ackEvent(MemorySegment event) {
        Arena memory = UNACKED.remove(event.address());
        if (memory == null) {
            return fail(Errno.EINVAL);
        }
        memory.close();
        return 0;
    }

    /**
     * Queues an event for {@code to} on its channel; {@code from} is the peer whose CM message it carries (QP number,
     * RNR retry count, private data padded to {@code padTo} bytes as the IB CM message is).
     */
    private static void post(SoftCmId to, int type, int status, SoftCmId listener, SoftCmId from, byte[] data, int padTo) {
        Arena memory = Arena.ofShared();
        MemorySegment event = memory.allocate(RdmaCma.rdma_cm_event);
        RdmaCma.rdma_cm_event$id.set(event, 0L, to.struct);
        RdmaCma.rdma_cm_event$listen_id.set(event, 0L, listener == null ? MemorySegment.NULL : listener.struct);
        RdmaCma.rdma_cm_event$event.set(event, 0L, type);
        RdmaCma.rdma_cm_event$status.set(event, 0L, status);
        if (data != null) {
            MemorySegment copy = memory.allocate(padTo);
            MemorySegment.copy(MemorySegment.ofArray(data), 0, copy, 0, data.length);
            RdmaCma.rdma_cm_event$param$conn$private_data.set(event, 0L, copy);
            RdmaCma.rdma_cm_event$param$conn$private_data_len.set(event, 0L, (byte) padTo);
        }
        if (from != null) {
            RdmaCma.rdma_cm_event$param$conn$qp_num.set(event, 0L, from.qpNum);
            RdmaCma.rdma_cm_event$param$conn$rnr_retry_count.set(event, 0L, (byte) from.rnrRetry);
            RdmaCma.rdma_cm_event$param$conn$responder_resources.set(event, 0L, (byte) RD_ATOMIC);
            RdmaCma.rdma_cm_event$param$conn$initiator_depth.set(event, 0L, (byte) RD_ATOMIC);
        }
        to.channel.add(new SoftCmChannel.Event(event, memory));
    }

    // ------------------------------------------------------------------ ids and addresses

    int createId(MemorySegment channel, MemorySegment idOut, MemorySegment context, int portSpace) {
        try {
            SoftCmChannel ch = channels.get(channel.address());
            if (ch == null || portSpace != RdmaCma.RDMA_PS_TCP) {
                return fail(Errno.EINVAL);
            }
            SoftCmId id = newId(ch);
            RdmaCma.rdma_cm_id$context.set(id.struct, 0L, context);
            idOut.reinterpret(ADDRESS.byteSize()).set(ADDRESS, 0, id.struct);
            return 0;
        } catch (Throwable t) {
            return fail(t);
        }
    }

    private SoftCmId newId(SoftCmChannel channel) {
        MemorySegment struct = arena.allocate(RdmaCma.rdma_cm_id);
        RdmaCma.rdma_cm_id$channel.set(struct, 0L, channel.struct);
        RdmaCma.rdma_cm_id$ps.set(struct, 0L, RdmaCma.RDMA_PS_TCP);
        RdmaCma.rdma_cm_id$port_num.set(struct, 0L, (byte) 1);
        // rdma_get_peer_addr is an inline reading &id->route.addr.dst_addr: the address lives in the struct itself
        SoftCmId id = new SoftCmId(this, struct, struct.reinterpret(RdmaCma.rdma_cm_id.byteSize())
                .asSlice(RdmaCma.rdma_cm_id$route_addr_dst_addr$OFFSET, RdmaCma.sockaddr_in.byteSize()), channel);
        ids.put(struct.address(), id);
        return id;
    }

    int bindAddr(MemorySegment idPointer, MemorySegment address) {
        try {
            synchronized (LOCK) {
                SoftCmId id = id(idPointer);
                int wanted = RdmaCmLibrary.decodeSockaddrIn(address.reinterpret(RdmaCma.sockaddr_in.byteSize())).getPort();
                if (id.port != 0) {
                    return fail(Errno.EINVAL);
                }
                int port = device.network().bindCmPort(wanted, id);
                if (port < 0) {
                    return fail(Errno.EADDRINUSE);
                }
                id.port = port;
                id.bindDevice();
                return 0;
            }
        } catch (Throwable t) {
            return fail(t);
        }
    }

    int listen(MemorySegment idPointer, int backlog) {
        try {
            synchronized (LOCK) {
                SoftCmId id = id(idPointer);
                if (id.port == 0) {
                    return fail(Errno.EINVAL);
                }
                id.listening = true;
                return 0;
            }
        } catch (Throwable t) {
            return fail(t);
        }
    }

    short sourcePort(MemorySegment idPointer) {
        try {
            synchronized (LOCK) {
                return Short.reverseBytes((short) id(idPointer).port);
            }
        } catch (Throwable t) {
            device.recordFailure(t);
            return 0;
        }
    }

    /** Any address resolves (to this device); whether a listener is there shows at rdma_connect. */
    int resolveAddr(MemorySegment idPointer, MemorySegment source, MemorySegment destination, int timeoutMillis) {
        try {
            synchronized (LOCK) {
                SoftCmId id = id(idPointer);
                if (id.state != SoftCmId.State.IDLE) {
                    return fail(Errno.EINVAL);
                }
                id.destinationPort = RdmaCmLibrary.decodeSockaddrIn(
                        destination.reinterpret(RdmaCma.sockaddr_in.byteSize())).getPort();
                if (id.port == 0) {
                    id.port = device.network().ephemeralCmPort();
                }
                id.bindDevice();
                id.state = SoftCmId.State.ADDR_RESOLVED;
                post(id, RdmaCma.RDMA_CM_EVENT_ADDR_RESOLVED, 0, null, null, null, 0);
                return 0;
            }
        } catch (Throwable t) {
            return fail(t);
        }
    }

    int resolveRoute(MemorySegment idPointer, int timeoutMillis) {
        try {
            synchronized (LOCK) {
                SoftCmId id = id(idPointer);
                if (id.state != SoftCmId.State.ADDR_RESOLVED) {
                    return fail(Errno.EINVAL);
                }
                id.state = SoftCmId.State.ROUTE_RESOLVED;
                post(id, RdmaCma.RDMA_CM_EVENT_ROUTE_RESOLVED, 0, null, null, null, 0);
                return 0;
            }
        } catch (Throwable t) {
            return fail(t);
        }
    }

    MemorySegment getDevices(MemorySegment countOut) {
        countOut.reinterpret(JAVA_INT.byteSize()).set(JAVA_INT, 0, 1);
        return deviceList;
    }

    void freeDevices(MemorySegment list) {
        // the list is the device's, freed with it
    }

    // ------------------------------------------------------------------ QP attributes

    /** What the kernel's IB CM resolved for the QP of this connection, per target state (cm_init_qp_*_attr). */
    int initQpAttr(MemorySegment idPointer, MemorySegment attrPointer, MemorySegment maskOut) {
        try {
            synchronized (LOCK) {
                SoftCmId id = id(idPointer);
                MemorySegment attr = attrPointer.reinterpret(Verbs.ibv_qp_attr.byteSize());
                int state = (int) Verbs.ibv_qp_attr$qp_state.get(attr, 0L);
                int mask = Verbs.IBV_QP_STATE;
                SoftCmId peer = id.peer;
                switch (state) {
                    case Verbs.IBV_QPS_INIT -> {
                        Verbs.ibv_qp_attr$pkey_index.set(attr, 0L, (short) 0);
                        Verbs.ibv_qp_attr$port_num.set(attr, 0L, (byte) 1);
                        Verbs.ibv_qp_attr$qp_access_flags.set(attr, 0L,
                                Verbs.IBV_ACCESS_REMOTE_READ | Verbs.IBV_ACCESS_REMOTE_WRITE);
                        mask |= Verbs.IBV_QP_PKEY_INDEX | Verbs.IBV_QP_PORT | Verbs.IBV_QP_ACCESS_FLAGS;
                    }
                    case Verbs.IBV_QPS_RTR -> {
                        if (peer == null) {
                            return fail(Errno.EINVAL);
                        }
                        Verbs.ibv_qp_attr$path_mtu.set(attr, 0L, Verbs.IBV_MTU_4096);
                        Verbs.ibv_qp_attr$dest_qp_num.set(attr, 0L, peer.qpNum);
                        Verbs.ibv_qp_attr$rq_psn.set(attr, 0L, peer.psn);
                        Verbs.ibv_qp_attr$max_dest_rd_atomic.set(attr, 0L, (byte) RD_ATOMIC);
                        Verbs.ibv_qp_attr$min_rnr_timer.set(attr, 0L, (byte) 0); // the kernel's IB CM sets 0
                        Verbs.ibv_qp_attr$ah_attr$dlid.set(attr, 0L, (short) peer.cm.device.lid());
                        Verbs.ibv_qp_attr$ah_attr$port_num.set(attr, 0L, (byte) 1);
                        mask |= Verbs.IBV_QP_AV | Verbs.IBV_QP_PATH_MTU | Verbs.IBV_QP_DEST_QPN | Verbs.IBV_QP_RQ_PSN
                                | Verbs.IBV_QP_MAX_DEST_RD_ATOMIC | Verbs.IBV_QP_MIN_RNR_TIMER;
                    }
                    case Verbs.IBV_QPS_RTS -> {
                        if (peer == null) {
                            return fail(Errno.EINVAL);
                        }
                        Verbs.ibv_qp_attr$sq_psn.set(attr, 0L, id.psn);
                        Verbs.ibv_qp_attr$timeout.set(attr, 0L, (byte) 14);
                        Verbs.ibv_qp_attr$retry_cnt.set(attr, 0L, (byte) 7);
                        Verbs.ibv_qp_attr$rnr_retry.set(attr, 0L, (byte) peer.rnrRetry); // IB CM: the peer's count
                        Verbs.ibv_qp_attr$max_rd_atomic.set(attr, 0L, (byte) RD_ATOMIC);
                        mask |= Verbs.IBV_QP_SQ_PSN | Verbs.IBV_QP_TIMEOUT | Verbs.IBV_QP_RETRY_CNT
                                | Verbs.IBV_QP_RNR_RETRY | Verbs.IBV_QP_MAX_QP_RD_ATOMIC;
                    }
                    default -> {
                        return fail(Errno.EINVAL);
                    }
                }
                maskOut.reinterpret(JAVA_INT.byteSize()).set(JAVA_INT, 0, mask);
                return 0;
            }
        } catch (Throwable t) {
            return fail(t);
        }
    }

    // ------------------------------------------------------------------ the CM exchange

    private static byte[] privateData(MemorySegment param, int limit) {
        MemorySegment p = param.reinterpret(RdmaCma.rdma_conn_param.byteSize());
        int length = Byte.toUnsignedInt((byte) RdmaCma.rdma_conn_param$private_data_len.get(p, 0L));
        if (length > limit) {
            return null;
        }
        MemorySegment data = (MemorySegment) RdmaCma.rdma_conn_param$private_data.get(p, 0L);
        return length == 0 ? new byte[0] : data.reinterpret(length).toArray(JAVA_BYTE);
    }

    private static void takeParameters(SoftCmId id, MemorySegment param) {
        MemorySegment p = param.reinterpret(RdmaCma.rdma_conn_param.byteSize());
        id.qpNum = (int) RdmaCma.rdma_conn_param$qp_num.get(p, 0L);
        id.rnrRetry = Byte.toUnsignedInt((byte) RdmaCma.rdma_conn_param$rnr_retry_count.get(p, 0L)) & 7;
    }

    private static void setPeerAddress(SoftCmId id, int port) {
        RdmaCma.sockaddr_in$sin_family.set(id.peerAddress, 0L, (short) RdmaCma.AF_INET);
        RdmaCma.sockaddr_in$sin_port.set(id.peerAddress, 0L, Short.reverseBytes((short) port));
        RdmaCma.sockaddr_in$sin_addr.set(id.peerAddress, 0L, 0x0100007F); // 127.0.0.1 in network order, read LE
    }

    /** The REQ: a CONNECT_REQUEST on a new id of the listener's CM, or REJECTED when nobody listens there. */
    int connect(MemorySegment idPointer, MemorySegment param) {
        try {
            synchronized (LOCK) {
                SoftCmId id = id(idPointer);
                byte[] data = privateData(param, REQ_PRIVATE_DATA);
                if (id.state != SoftCmId.State.ROUTE_RESOLVED || data == null) {
                    return fail(Errno.EINVAL);
                }
                takeParameters(id, param);
                id.state = SoftCmId.State.CONNECTING;
                setPeerAddress(id, id.destinationPort);
                SoftCmId listener = device.network().cmPort(id.destinationPort);
                if (listener == null || !listener.listening) {
                    id.state = SoftCmId.State.DISCONNECTED;
                    post(id, RdmaCma.RDMA_CM_EVENT_REJECTED, REJECT_INVALID_SERVICE_ID, null, null, null, 0);
                    return 0;
                }
                SoftCmId incoming = listener.cm.newId(listener.channel);
                incoming.bindDevice();
                incoming.port = listener.port;
                incoming.peer = id;
                incoming.state = SoftCmId.State.REQUESTED;
                setPeerAddress(incoming, id.port);
                id.peer = incoming;
                post(incoming, RdmaCma.RDMA_CM_EVENT_CONNECT_REQUEST, 0, listener, id, data, REQ_PRIVATE_DATA);
                return 0;
            }
        } catch (Throwable t) {
            return fail(t);
        }
    }

    /** The REP: CONNECT_RESPONSE for the active side; the passive side's ESTABLISHED waits for its RTU. */
    int accept(MemorySegment idPointer, MemorySegment param) {
        try {
            synchronized (LOCK) {
                SoftCmId id = id(idPointer);
                byte[] data = privateData(param, REP_PRIVATE_DATA);
                if (id.state != SoftCmId.State.REQUESTED || data == null) {
                    return fail(Errno.EINVAL);
                }
                takeParameters(id, param);
                SoftCmId peer = id.peer;
                if (peer.state != SoftCmId.State.CONNECTING) {
                    id.state = SoftCmId.State.DISCONNECTED; // the REQ's sender went away: the REP is never answered
                    post(id, RdmaCma.RDMA_CM_EVENT_UNREACHABLE, -Errno.ETIMEDOUT, null, null, null, 0);
                    return 0;
                }
                id.state = SoftCmId.State.ACCEPTED;
                peer.state = SoftCmId.State.RESPONDED;
                post(peer, RdmaCma.RDMA_CM_EVENT_CONNECT_RESPONSE, 0, null, id, data, REP_PRIVATE_DATA);
                return 0;
            }
        } catch (Throwable t) {
            return fail(t);
        }
    }

    /** The RTU, sent by the active side once its QP is ready: ESTABLISHED for the passive side. */
    int establish(MemorySegment idPointer) {
        try {
            synchronized (LOCK) {
                SoftCmId id = id(idPointer);
                if (id.state != SoftCmId.State.RESPONDED) {
                    return fail(Errno.EINVAL);
                }
                id.state = SoftCmId.State.ESTABLISHED;
                SoftCmId peer = id.peer;
                if (peer.state == SoftCmId.State.ACCEPTED) {
                    peer.state = SoftCmId.State.ESTABLISHED;
                    post(peer, RdmaCma.RDMA_CM_EVENT_ESTABLISHED, 0, null, null, null, 0);
                } else {
                    id.state = SoftCmId.State.DISCONNECTED; // the passive side went away meanwhile
                    post(id, RdmaCma.RDMA_CM_EVENT_DISCONNECTED, 0, null, null, null, 0);
                }
                return 0;
            }
        } catch (Throwable t) {
            return fail(t);
        }
    }

    /** The REJ: REJECTED (consumer defined) with the private data for the active side. */
    int reject(MemorySegment idPointer, MemorySegment data, byte length) {
        try {
            synchronized (LOCK) {
                SoftCmId id = id(idPointer);
                int n = Byte.toUnsignedInt(length);
                if (id.state != SoftCmId.State.REQUESTED || n > REJ_PRIVATE_DATA) {
                    return fail(Errno.EINVAL);
                }
                id.state = SoftCmId.State.DISCONNECTED;
                SoftCmId peer = id.peer;
                if (peer.state == SoftCmId.State.CONNECTING) {
                    peer.state = SoftCmId.State.DISCONNECTED;
                    byte[] reason = n == 0 ? new byte[0] : data.reinterpret(n).toArray(JAVA_BYTE);
                    post(peer, RdmaCma.RDMA_CM_EVENT_REJECTED, RdmaCmLibrary.REJECT_CONSUMER_DEFINED, null, id, reason,
                            REJ_PRIVATE_DATA);
                }
                return 0;
            }
        } catch (Throwable t) {
            return fail(t);
        }
    }

    /** The DREQ: DISCONNECTED on both sides, once each. */
    int disconnect(MemorySegment idPointer) {
        try {
            synchronized (LOCK) {
                SoftCmId id = id(idPointer);
                if (!id.connected()) {
                    return fail(Errno.EINVAL);
                }
                id.state = SoftCmId.State.DISCONNECTED;
                post(id, RdmaCma.RDMA_CM_EVENT_DISCONNECTED, 0, null, null, null, 0);
                breakPeer(id);
                return 0;
            }
        } catch (Throwable t) {
            return fail(t);
        }
    }

    /** What the peer of an id that disconnects or goes away learns, by the state of the exchange. */
    private static void breakPeer(SoftCmId id) {
        SoftCmId peer = id.peer;
        if (peer == null) {
            return;
        }
        if (peer.connected()) {
            peer.state = SoftCmId.State.DISCONNECTED;
            post(peer, RdmaCma.RDMA_CM_EVENT_DISCONNECTED, 0, null, null, null, 0);
        } else if (peer.state == SoftCmId.State.CONNECTING) {
            peer.state = SoftCmId.State.DISCONNECTED; // the REQ's receiver went away unanswered: the REQ times out
            post(peer, RdmaCma.RDMA_CM_EVENT_UNREACHABLE, -Errno.ETIMEDOUT, null, null, null, 0);
        }
    }

    int destroyId(MemorySegment idPointer) {
        try {
            synchronized (LOCK) {
                SoftCmId id = ids.remove(idPointer.address());
                if (id == null) {
                    return fail(Errno.EINVAL);
                }
                destroy(id);
                return 0;
            }
        } catch (Throwable t) {
            return fail(t);
        }
    }

    private void destroy(SoftCmId id) {
        if (id.state != SoftCmId.State.DISCONNECTED) {
            breakPeer(id);
        }
        id.state = SoftCmId.State.DESTROYED;
        device.network().unbindCmPort(id.port, id); // only if this id holds it: not an accepted connection's id
    }

    /** The device goes away: its ids' peers see them disconnect, channels and events are freed. */
    @Override
    public void close() {
        synchronized (LOCK) {
            ids.values().forEach(this::destroy);
            ids.clear();
        }
        channels.values().forEach(SoftCmChannel::close);
        channels.clear();
    }
}
