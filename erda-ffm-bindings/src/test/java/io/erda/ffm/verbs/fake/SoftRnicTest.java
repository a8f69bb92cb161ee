package io.erda.ffm.verbs.fake;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.erda.ffm.verbs.CompletionQueue;
import io.erda.ffm.verbs.ConnectionParameters;
import io.erda.ffm.verbs.IbvContext;
import io.erda.ffm.verbs.MemoryRegistration;
import io.erda.ffm.verbs.ProtectionDomain;
import io.erda.ffm.verbs.QpInfo;
import io.erda.ffm.verbs.QueuePair;
import io.erda.ffm.verbs.QueuePairCapacity;
import io.erda.ffm.verbs.ReceiveRequestWriter;
import io.erda.ffm.verbs.Verbs;
import io.erda.ffm.verbs.VerbsException;
import io.erda.ffm.verbs.VerbsLibrary;
import io.erda.ffm.verbs.WorkCompletions;
import io.erda.ffm.verbs.WorkRequestWriter;
import java.lang.foreign.Arena;
import java.lang.foreign.ValueLayout;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/** Two software-RNIC devices driven through the typed bindings only, as a provider drives a real RNIC. */
class SoftRnicTest {
    private final SoftRnic network = new SoftRnic();
    private final Arena arena = Arena.ofShared();
    private final Side a = new Side(network.newDevice());
    private final Side b = new Side(network.newDevice());

    private final class Side {
        final SoftRnicDevice device;
        final IbvContext context;
        final ProtectionDomain pd;
        final MemoryRegistration mr;
        final CompletionQueue cq;
        final QueuePair qp;
        final WorkCompletions wc = new WorkCompletions(arena, 4);

        Side(SoftRnicDevice device) {
            this.device = device;
            this.context = IbvContext.wrap(new VerbsLibrary(device.lookup()), device.context());
            this.pd = context.allocateProtectionDomain();
            this.mr = pd.register(arena.allocate(4096, 64), Verbs.IBV_ACCESS_LOCAL_WRITE | Verbs.IBV_ACCESS_REMOTE_READ);
            this.cq = context.createCompletionQueue(16, null);
            this.qp = pd.createQueuePair(cq, cq, QueuePairCapacity.of(8, 8));
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

    @AfterEach
    void close() {
        assertThat(a.device.failures()).isEmpty();
        assertThat(b.device.failures()).isEmpty();
        a.device.close();
        b.device.close();
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
}
