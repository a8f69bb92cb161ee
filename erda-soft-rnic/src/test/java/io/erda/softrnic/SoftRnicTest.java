package io.erda.softrnic;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.erda.ffm.verbs.IbvCompletionQueue;
import io.erda.ffm.verbs.ConnectionParameters;
import io.erda.ffm.verbs.IbvContext;
import io.erda.ffm.verbs.MemoryRegistration;
import io.erda.ffm.verbs.ProtectionDomain;
import io.erda.ffm.verbs.QpInfo;
import io.erda.ffm.verbs.QueuePair;
import io.erda.ffm.verbs.QueuePairCapacity;
import io.erda.ffm.verbs.QueuePairEx;
import io.erda.ffm.verbs.ReceiveRequestWriter;
import io.erda.ffm.verbs.Verbs;
import io.erda.ffm.verbs.VerbsException;
import io.erda.ffm.verbs.VerbsLibrary;
import io.erda.ffm.verbs.WorkCompletions;
import io.erda.ffm.verbs.WorkRequestWriter;
import java.lang.foreign.Arena;
import java.lang.foreign.ValueLayout;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/** Two software-RNIC devices driven through the typed bindings only, as a provider drives a real RNIC. */
class SoftRnicTest {
    private final SoftRnic network = new SoftRnic();
    private final Arena arena = Arena.ofShared();
    private final Side a = new Side(network.newDevice(), false);
    private final Side b = new Side(network.newDevice(), false);
    private static final int REMOTE = Verbs.IBV_ACCESS_LOCAL_WRITE | Verbs.IBV_ACCESS_REMOTE_READ;

    private final class Side {
        final SoftRnicDevice device;
        final IbvContext context;
        final ProtectionDomain pd;
        final MemoryRegistration mr;
        final IbvCompletionQueue cq;
        final QueuePair qp;
        final WorkCompletions wc = new WorkCompletions(arena, 4);

        /** @param extended ibv_create_qp_ex with every send op the device has (and remote write on the region) */
        Side(SoftRnicDevice device, boolean extended) {
            this.device = device;
            this.context = IbvContext.wrap(new VerbsLibrary(device.lookup()), device.context());
            this.pd = context.allocateProtectionDomain();
            this.mr = pd.register(arena.allocate(4096, 64), extended ? REMOTE | Verbs.IBV_ACCESS_REMOTE_WRITE : REMOTE);
            this.cq = context.createCompletionQueue(16, null);
            this.qp = extended ? pd.createQueuePairEx(cq, cq, QueuePairCapacity.of(8, 8), SoftRnicDevice.SEND_OPS)
                    : pd.createQueuePair(cq, cq, QueuePairCapacity.of(8, 8));
        }

        QpInfo info() {
            return qp.localInfo(context, ConnectionParameters.defaults(), 1, new byte[0]);
        }

        int awaitStatus() throws InterruptedException {
            for (int i = 0; i < 5000; i++) {
                if (cq.poll(wc) > 0) {
                    return wc.status(0);
                }
                Thread.sleep(1);
            }
            throw new AssertionError("no completion within 5 s");
        }
    }

    private void connect() {
        connect(a, b);
    }

    private static void connect(Side a, Side b) {
        ConnectionParameters p = ConnectionParameters.defaults();
        QpInfo ia = a.info();
        QpInfo ib = b.info();
        for (Side s : new Side[] {a, b}) {
            s.qp.modifyToInit(p);
        }
        a.qp.modifyToRtr(p, ib);
        b.qp.modifyToRtr(p, ia);
        a.qp.modifyToRts(p, 1);
        b.qp.modifyToRts(p, 1);
    }

    private Side c;
    private Side d;

    /** Connects c and d, two devices with extended QPs; closed after the test with the others. */
    private void connectExtended() {
        c = new Side(network.newDevice(), true);
        d = new Side(network.newDevice(), true);
        extraDevices.add(c.device);
        extraDevices.add(d.device);
        connect(c, d);
    }

    private final List<SoftRnicDevice> extraDevices = new ArrayList<>();

    @AfterEach
    void close() {
        List<SoftRnicDevice> all = new ArrayList<>(List.of(a.device, b.device));
        all.addAll(extraDevices);
        for (SoftRnicDevice device : all) {
            assertThat(device.failures()).isEmpty();
            device.close();
        }
        arena.close();
    }

    @Test
    void readBetweenDevicesCopiesTheRemoteBytes() throws Exception {
        connect();
        b.mr.memory().set(ValueLayout.JAVA_LONG, 64, 0x1122334455667788L);
        WorkRequestWriter w = new WorkRequestWriter(arena, 1);
        w.read(5, a.mr.address(), 8, a.mr.lkey(), b.mr.address() + 64, b.mr.rkey()).signaled();
        a.qp.postSend(w);
        assertThat(a.awaitStatus()).isEqualTo(Verbs.IBV_WC_SUCCESS);
        assertThat(a.wc.wrId(0)).isEqualTo(5);
        assertThat(a.wc.opcode(0)).isEqualTo(Verbs.IBV_WC_RDMA_READ);
        assertThat(a.mr.memory().get(ValueLayout.JAVA_LONG, 0)).isEqualTo(0x1122334455667788L);
    }

    @Test
    void postingBeforeRtsIsRefusedAsByARealProvider() {
        a.qp.modifyToInit(ConnectionParameters.defaults());
        WorkRequestWriter w = new WorkRequestWriter(arena, 1);
        w.read(1, a.mr.address(), 8, a.mr.lkey(), 0, 0);
        assertThatThrownBy(() -> a.qp.postSend(w)).isInstanceOf(VerbsException.class).hasMessageContaining("EINVAL");
    }

    @Test
    void writeWithoutRemoteWriteAccessFailsAndTakesBothQueuePairsToError() throws Exception {
        connect();
        ReceiveRequestWriter recv = new ReceiveRequestWriter(arena, 1);
        recv.receive(9, b.mr.address(), 64, b.mr.lkey());
        b.qp.postRecv(recv);
        WorkRequestWriter w = new WorkRequestWriter(arena, 1);
        w.write(1, a.mr.address(), 8, a.mr.lkey(), b.mr.address(), b.mr.rkey()).signaled();
        a.qp.postSend(w);
        assertThat(a.awaitStatus()).isEqualTo(Verbs.IBV_WC_REM_ACCESS_ERR);
        assertThat(b.awaitStatus()).isEqualTo(Verbs.IBV_WC_WR_FLUSH_ERR);
        assertThat(b.wc.wrId(0)).isEqualTo(9);
        assertThat(b.qp.state()).isEqualTo(Verbs.IBV_QPS_RTS); // the library's cached state; the device's is ERR
        a.qp.postSend(w.reset().write(2, a.mr.address(), 8, a.mr.lkey(), b.mr.address(), b.mr.rkey()));
        assertThat(a.awaitStatus()).as("unsignalled, but flushed").isEqualTo(Verbs.IBV_WC_WR_FLUSH_ERR);
    }

    // ------------------------------------------------------------------ ibv_qp_ex (ibv_create_qp_ex, ibv_wr_*)

    @Test
    void extendedBatchExecutesWriteAtomicWriteAndReadInOrder() throws Exception {
        connectExtended();
        QueuePairEx ex = c.qp.extended();
        assertThat(ex.hasAtomicWrite()).isTrue();
        c.mr.memory().set(ValueLayout.JAVA_LONG, 0, 0x0102030405060708L);
        ex.start();
        ex.next(1, 0).rdmaWrite(d.mr.rkey(), d.mr.address()).setSge(c.mr.lkey(), c.mr.address(), 8);
        ex.next(2, 0).atomicWrite(d.mr.rkey(), d.mr.address() + 64, 0x7766554433221100L);
        ex.next(3, Verbs.IBV_SEND_SIGNALED).rdmaRead(d.mr.rkey(), d.mr.address() + 64).setSge(c.mr.lkey(), c.mr.address() + 512, 8);
        ex.complete();
        assertThat(c.awaitStatus()).isEqualTo(Verbs.IBV_WC_SUCCESS);
        assertThat(c.wc.wrId(0)).as("only the signalled request completes").isEqualTo(3);
        assertThat(d.mr.memory().get(ValueLayout.JAVA_LONG, 0)).isEqualTo(0x0102030405060708L);
        assertThat(d.mr.memory().get(ValueLayout.JAVA_LONG, 64)).isEqualTo(0x7766554433221100L);
        assertThat(c.mr.memory().get(ValueLayout.JAVA_LONG, 512)).as("read after the atomic write").isEqualTo(0x7766554433221100L);
    }

    @Test
    void atomicWriteCompletesWithItsOwnOpcodeAndPostSendStillWorksOnTheSameQp() throws Exception {
        connectExtended();
        QueuePairEx ex = c.qp.extended();
        ex.start();
        ex.next(7, Verbs.IBV_SEND_SIGNALED).atomicWrite(d.mr.rkey(), d.mr.address() + 8, -2L);
        ex.complete();
        assertThat(c.awaitStatus()).isEqualTo(Verbs.IBV_WC_SUCCESS);
        assertThat(c.wc.opcode(0)).isEqualTo(Verbs.IBV_WC_ATOMIC_WRITE);
        WorkRequestWriter w = new WorkRequestWriter(arena, 1);
        c.qp.postSend(w.read(8, c.mr.address(), 8, c.mr.lkey(), d.mr.address() + 8, d.mr.rkey()).signaled());
        assertThat(c.awaitStatus()).isEqualTo(Verbs.IBV_WC_SUCCESS);
        assertThat(c.mr.memory().get(ValueLayout.JAVA_LONG, 0)).isEqualTo(-2L);
    }

    @Test
    void unalignedAtomicWriteFailsWithInvalidRequestAndLeavesMemory() throws Exception {
        connectExtended();
        d.mr.memory().set(ValueLayout.JAVA_LONG, 8, 5L);
        QueuePairEx ex = c.qp.extended();
        ex.start();
        ex.next(1, 0).atomicWrite(d.mr.rkey(), d.mr.address() + 12, -1L);
        ex.complete();
        assertThat(c.awaitStatus()).isEqualTo(Verbs.IBV_WC_REM_INV_REQ_ERR);
        assertThat(d.mr.memory().get(ValueLayout.JAVA_LONG, 8)).isEqualTo(5L);
    }

    @Test
    void wrCompleteWithoutWrStartFailsWithEinval() {
        connectExtended();
        QueuePairEx ex = c.qp.extended();
        ex.next(1, 0).atomicWrite(d.mr.rkey(), d.mr.address(), 1L);
        assertThatThrownBy(ex::complete).isInstanceOf(VerbsException.class).hasMessageContaining("EINVAL");
    }

    @Test
    void createQpExWithASendOpTheDeviceLacksFailsWithEopnotsupp() {
        long sendWithInvalidate = 1L << 9; // IBV_QP_EX_WITH_SEND_WITH_INV: not modelled by the software RNIC
        assertThatThrownBy(() -> a.pd.createQueuePairEx(a.cq, a.cq, QueuePairCapacity.of(4, 4),
                Verbs.IBV_QP_EX_WITH_RDMA_WRITE | sendWithInvalidate))
                .isInstanceOf(VerbsException.class).hasMessageContaining("ibv_create_qp_ex").hasMessageContaining("EOPNOTSUPP");
    }

    @Test
    void classicQueuePairHasNoExtendedApi() {
        assertThat(a.qp.extended()).isNull();
        assertThat(new VerbsLibrary(a.device.lookup()).qpToQpEx(a.qp.segment()).address()).isZero();
    }

    @Test
    void contextWithoutCreateQpExRefusesWithEopnotsupp() {
        try (FakeVerbsDevice fake = new FakeVerbsDevice()) {
            refusesCreateQpEx(fake);
        }
    }

    private static void refusesCreateQpEx(FakeVerbsDevice fake) {
        VerbsLibrary verbs = new VerbsLibrary(fake.lookup());
        IbvContext context = IbvContext.wrap(verbs, fake.context());
        ProtectionDomain pd = context.allocateProtectionDomain();
        IbvCompletionQueue cq = context.createCompletionQueue(4, null);
        assertThatThrownBy(() -> pd.createQueuePairEx(cq, cq, QueuePairCapacity.of(4, 4), Verbs.IBV_QP_EX_WITH_ATOMIC_WRITE))
                .isInstanceOf(VerbsException.class).hasMessageContaining("EOPNOTSUPP").hasMessageContaining("create_qp_ex");
    }
}
