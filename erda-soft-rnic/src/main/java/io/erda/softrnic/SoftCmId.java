package io.erda.softrnic;

import io.erda.ffm.rdmacm.RdmaCma;
import java.lang.foreign.MemorySegment;
import java.util.concurrent.ThreadLocalRandom;

/**
 * One {@code struct rdma_cm_id} of a {@link SoftRdmaCm}: the native struct the application holds, and the state of
 * the emulated IB CM exchange (REQ, REP or REJ, RTU, DREQ). Guarded by {@link SoftRdmaCm#LOCK}.
 */
final class SoftCmId {
    enum State { IDLE, ADDR_RESOLVED, ROUTE_RESOLVED, CONNECTING, REQUESTED, ACCEPTED, RESPONDED, ESTABLISHED,
        DISCONNECTED, DESTROYED }

    final SoftRdmaCm cm;
    final MemorySegment struct;
    /** The peer's address, in the id struct where rdma_get_peer_addr (an inline) reads it: 127.0.0.1, the peer's port. */
    final MemorySegment peerAddress;
    final SoftCmChannel channel;
    /** The starting PSN the IB CM would put in this side's REQ or REP. */
    final int psn = ThreadLocalRandom.current().nextInt() & 0xFF_FFFF;

    State state = State.IDLE;
    int port;
    boolean listening;
    int destinationPort;
    SoftCmId peer;
    /** From this side's rdma_connect / rdma_accept parameters. */
    int qpNum;
    int rnrRetry;

    SoftCmId(SoftRdmaCm cm, MemorySegment struct, MemorySegment peerAddress, SoftCmChannel channel) {
        this.cm = cm;
        this.struct = struct;
        this.peerAddress = peerAddress;
        this.channel = channel;
    }

    boolean connected() {
        return state == State.ACCEPTED || state == State.RESPONDED || state == State.ESTABLISHED;
    }

    /** Binds the id to the device: what resolving or binding an address does to {@code id->verbs}. */
    void bindDevice() {
        RdmaCma.rdma_cm_id$verbs.set(struct, 0L, cm.context());
    }
}
