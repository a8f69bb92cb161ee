package io.erda.softrnic;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.erda.ffm.verbs.IbvCompletionQueue;
import io.erda.ffm.verbs.ConnectionParameters;
import io.erda.ffm.verbs.Errno;
import io.erda.ffm.verbs.IbvContext;
import io.erda.ffm.verbs.MemoryRegistration;
import io.erda.ffm.verbs.ProtectionDomain;
import io.erda.ffm.verbs.QpInfo;
import io.erda.ffm.verbs.QueuePair;
import io.erda.ffm.verbs.QueuePairCapacity;
import io.erda.ffm.verbs.RdmaUnavailableException;
import io.erda.ffm.verbs.ReceiveRequestWriter;
import io.erda.ffm.verbs.Verbs;
import io.erda.ffm.verbs.VerbsException;
import io.erda.ffm.verbs.VerbsLibrary;
import io.erda.ffm.verbs.WorkCompletions;
import io.erda.ffm.verbs.WorkRequestWriter;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** The typed layer against the ABI-level fake: what it hands to "native" code is laid out right. */
class FakeVerbsRoundTripTest {
    private FakeVerbsDevice fake;
    private Arena arena;
    private IbvContext context;
    private ProtectionDomain pd;
    private MemoryRegistration mr;
    private IbvCompletionQueue cq;
    private QueuePair qp;

    @BeforeEach
    void connect() {
        fake = new FakeVerbsDevice();
        arena = Arena.ofConfined();
        context = IbvContext.wrap(new VerbsLibrary(fake.lookup()), fake.context());
        pd = context.allocateProtectionDomain();
        mr = pd.register(arena.allocate(4096, 64), Verbs.IBV_ACCESS_LOCAL_WRITE | Verbs.IBV_ACCESS_REMOTE_READ);
        cq = context.createCompletionQueue(64, null);
        qp = pd.createQueuePair(cq, cq, QueuePairCapacity.of(32, 32));
    }

    @AfterEach
    void close() {
        qp.close();
        cq.close();
        mr.close();
        pd.close();
        arena.close();
        assertThat(fake.failures()).as("exceptions inside fake handlers").isEmpty();
        fake.close();
    }

    @Test
    void registrationExposesTheKeysAndRangeTheProviderWrote() {
        assertThat(mr.lkey()).isEqualTo(FakeVerbsDevice.lkeyOf(2));
        assertThat(mr.rkey()).isEqualTo(FakeVerbsDevice.rkeyOf(2));
        assertThat(mr.address()).isEqualTo(mr.memory().address());
        assertThat(mr.length()).isEqualTo(4096);
    }

    @Test
    void postedRdmaReadReachesTheProviderAsAnIbvSendWr() {
        long local = mr.memory().address() + 128;
        WorkRequestWriter wr = new WorkRequestWriter(arena, 4);
        wr.read(42L, local, 256, mr.lkey(), 0x7f00_0000_1000L, 0xBEEF).signaled();
        qp.postSend(wr);

        assertThat(fake.postedSends()).containsExactly(new PostedSend(42L, Verbs.IBV_WR_RDMA_READ,
                Verbs.IBV_SEND_SIGNALED, 0, 0x7f00_0000_1000L, 0xBEEF, 0, 0,
                List.of(new PostedSend.Sge(local, 256, mr.lkey()))));
    }

    @Test
    void chainOfEveryOpcodeKeepsOrderAndFields() {
        long local = mr.memory().address();
        WorkRequestWriter wr = new WorkRequestWriter(arena, 8);
        wr.write(1, local, 64, mr.lkey(), 0x1000, 11)
                .writeWithImmediate(2, local, 8, mr.lkey(), 0x2000, 12, 0xCAFE)
                .send(3, local, 16, mr.lkey()).inline()
                .compareAndSwap(4, local, mr.lkey(), 0x3000, 13, 5L, 6L).fenced()
                .fetchAdd(5, local, mr.lkey(), 0x4000, 14, 9L).signaled();
        qp.postSend(wr);

        List<PostedSend> sends = fake.postedSends();
        assertThat(sends).extracting(PostedSend::wrId).containsExactly(1L, 2L, 3L, 4L, 5L);
        assertThat(sends).extracting(PostedSend::opcode).containsExactly(Verbs.IBV_WR_RDMA_WRITE,
                Verbs.IBV_WR_RDMA_WRITE_WITH_IMM, Verbs.IBV_WR_SEND, Verbs.IBV_WR_ATOMIC_CMP_AND_SWP,
                Verbs.IBV_WR_ATOMIC_FETCH_AND_ADD);
        assertThat(sends).extracting(PostedSend::sendFlags).containsExactly(0, 0, Verbs.IBV_SEND_INLINE,
                Verbs.IBV_SEND_FENCE, Verbs.IBV_SEND_SIGNALED);
        assertThat(sends.get(1).immediate()).isEqualTo(0xCAFE);
        assertThat(sends.get(3)).extracting(PostedSend::remoteAddress, PostedSend::rkey, PostedSend::compareAdd,
                PostedSend::swap).containsExactly(0x3000L, 13, 5L, 6L);
        assertThat(sends.get(3).sges()).containsExactly(new PostedSend.Sge(local, 8, mr.lkey()));
        assertThat(sends.get(4)).extracting(PostedSend::remoteAddress, PostedSend::rkey, PostedSend::compareAdd)
                .containsExactly(0x4000L, 14, 9L);
    }

    @Test
    void pollDecodesTheCompletionsTheProviderWrote() {
        WorkRequestWriter wr = new WorkRequestWriter(arena, 2);
        wr.read(7L, mr.memory().address(), 32, mr.lkey(), 0x5000, 3).signaled();
        qp.postSend(wr);
        fake.complete(8L, Verbs.IBV_WC_REM_ACCESS_ERR, Verbs.IBV_WC_RDMA_WRITE, 0);

        WorkCompletions wcs = new WorkCompletions(arena, 4);
        assertThat(cq.poll(wcs)).isEqualTo(2);
        assertThat(wcs.count()).isEqualTo(2);
        assertThat(wcs.wrId(0)).isEqualTo(7L);
        assertThat(wcs.succeeded(0)).isTrue();
        assertThat(wcs.opcode(0)).isEqualTo(Verbs.IBV_WC_RDMA_READ);
        assertThat(wcs.byteLength(0)).isEqualTo(32);
        assertThat(wcs.qpNum(0)).isEqualTo(qp.qpNum());
        assertThat(wcs.wrId(1)).isEqualTo(8L);
        assertThat(wcs.status(1)).isEqualTo(Verbs.IBV_WC_REM_ACCESS_ERR);
        assertThat(cq.poll(wcs)).isZero();
    }

    @Test
    void receivesArePostedThroughTheOpsTable() {
        ReceiveRequestWriter recv = new ReceiveRequestWriter(arena, 2);
        long local = mr.memory().address();
        recv.receive(100, local, 512, mr.lkey()).receive(101, local + 512, 512, mr.lkey());
        qp.postRecv(recv);
        assertThat(fake.postedReceives()).containsExactly(
                new PostedReceive(100, List.of(new PostedSend.Sge(local, 512, mr.lkey()))),
                new PostedReceive(101, List.of(new PostedSend.Sge(local + 512, 512, mr.lkey()))));
    }

    @Test
    void queuePairGoesThroughInitRtrRtsWithTheExchangedNumbers() {
        ConnectionParameters p = ConnectionParameters.defaults();
        QpInfo local = qp.localInfo(context, p, 0x123456, new byte[0]);
        assertThat(local.lid()).isEqualTo(FakeVerbsDevice.LID);
        assertThat(local.qpNum()).isEqualTo(qp.qpNum());
        QpInfo remote = new QpInfo(0x999, 33, new byte[QpInfo.GID_LENGTH], 0x654321, new byte[0]);

        qp.modifyToInit(p);
        qp.modifyToRtr(p, remote);
        qp.modifyToRts(p, local.psn());

        assertThat(qp.state()).isEqualTo(Verbs.IBV_QPS_RTS);
        List<QpTransition> t = fake.transitions();
        assertThat(t).extracting(QpTransition::state)
                .containsExactly(Verbs.IBV_QPS_INIT, Verbs.IBV_QPS_RTR, Verbs.IBV_QPS_RTS);
        assertThat(t.get(0).accessFlags()).isEqualTo(p.accessFlags());
        assertThat(t.get(0).port()).isEqualTo(1);
        assertThat(t.get(1)).extracting(QpTransition::destQpNum, QpTransition::rqPsn, QpTransition::dlid)
                .containsExactly(0x999, 0x654321, 33);
        assertThat(t.get(1).mask() & Verbs.IBV_QP_DEST_QPN).isNotZero();
        assertThat(t.get(2).sqPsn()).isEqualTo(0x123456);
        assertThat(t.get(2).mask()).isEqualTo(Verbs.IBV_QP_STATE | Verbs.IBV_QP_SQ_PSN | Verbs.IBV_QP_TIMEOUT
                | Verbs.IBV_QP_RETRY_CNT | Verbs.IBV_QP_RNR_RETRY | Verbs.IBV_QP_MAX_QP_RD_ATOMIC);
    }

    @Test
    void rejectedPostNamesFunctionErrnoAndWorkRequest() {
        fake.failNext("post_send", Errno.EINVAL);
        WorkRequestWriter wr = new WorkRequestWriter(arena, 1);
        wr.write(1, mr.memory().address(), 8, mr.lkey(), 0x1000, 1);
        assertThatThrownBy(() -> qp.postSend(wr))
                .isInstanceOf(VerbsException.class)
                .hasMessage("ibv_post_send failed: rc=22, Invalid argument (EINVAL), rejected work request 0 of 1");
    }

    @Test
    void nullFromAControlPathCallCarriesTheCapturedErrno() {
        fake.failNext("ibv_alloc_pd", Errno.ENOMEM);
        assertThatThrownBy(context::allocateProtectionDomain)
                .isInstanceOf(VerbsException.class)
                .hasMessage("ibv_alloc_pd failed: rc=0, Cannot allocate memory (ENOMEM)")
                .satisfies(e -> assertThat(((VerbsException) e).errno()).isEqualTo(Errno.ENOMEM));
    }

    @Test
    void nonzeroStatusFromModifyQpIsAnException() {
        fake.failNext("ibv_modify_qp", Errno.EINVAL);
        assertThatThrownBy(() -> qp.modifyToInit(ConnectionParameters.defaults()))
                .isInstanceOf(VerbsException.class)
                .hasMessage("ibv_modify_qp failed: rc=22, Invalid argument (EINVAL)");
    }

    @Test
    void symbolTheFakeDoesNotProvideFailsClearly() {
        assertThatThrownBy(context::createCompletionChannel)
                .isInstanceOf(RdmaUnavailableException.class)
                .hasMessage("symbol ibv_create_comp_channel not found in libibverbs.so.1");
    }

    @Test
    void heapMemoryIsRejectedBeforeReachingTheProvider() {
        assertThatThrownBy(() -> pd.register(MemorySegment.ofArray(new byte[64]), Verbs.IBV_ACCESS_LOCAL_WRITE))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("heap segment of 64 bytes");
    }
}
