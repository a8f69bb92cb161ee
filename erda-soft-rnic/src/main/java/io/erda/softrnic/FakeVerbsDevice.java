package io.erda.softrnic;

import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_BYTE;

import io.erda.ffm.verbs.Errno;
import io.erda.ffm.verbs.DeviceAttributes;
import io.erda.ffm.verbs.Verbs;
import io.erda.ffm.verbs.WorkCompletions;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.SymbolLookup;
import java.lang.invoke.MethodHandles;
import java.util.ArrayDeque;
import java.util.Deque;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * An ABI-level fake RDMA device: a {@code struct ibv_context} in native memory whose ops table
 * (post_send, post_recv, poll_cq, req_notify_cq) holds FFM upcall stubs, and a {@link SymbolLookup}
 * whose control-path symbols (ibv_alloc_pd, ibv_reg_mr_iova2, ibv_create_cq, ibv_create_qp,
 * ibv_modify_qp, ibv_query_port, ...) are upcall stubs too. Code under test runs unchanged:
 * {@code new VerbsLibrary(fake.lookup())} and {@code IbvContext.wrap(verbs, fake.context())}.
 *
 * <p>It records what it was given, decoded from native memory (posted send and receive work
 * requests, QP transitions) and answers polls from a completion queue it fills itself: every
 * signaled send completes successfully unless a test queued something else with
 * {@link #complete}. {@link #failNext(String, int)} makes the next call of a function fail with an
 * errno, set in the native errno so that errno capture is exercised too. A handler never lets an
 * exception escape into native code (that would crash the JVM): it is recorded in
 * {@link #failures()} and turned into an error return.
 *
 * <p>One completion queue is shared by all CQs of the device: enough for single-connection tests.
 */
public final class FakeVerbsDevice implements AutoCloseable {
    /** The port attributes a query returns. */
    public static final int LID = 7;

    private final Arena arena = Arena.ofShared();
    private final MemorySegment context;
    private final UpcallStubs stubs;
    private final Map<String, Integer> failNext = new HashMap<>();
    private final List<PostedSend> sends = new CopyOnWriteArrayList<>();
    private final List<PostedReceive> receives = new CopyOnWriteArrayList<>();
    private final List<QpTransition> transitions = new CopyOnWriteArrayList<>();
    private final List<Throwable> failures = new CopyOnWriteArrayList<>();
    private final Deque<long[]> completions = new ArrayDeque<>();
    private final AtomicInteger handles = new AtomicInteger();

    public FakeVerbsDevice() {
        stubs = new UpcallStubs(MethodHandles.lookup(), this, arena);
        stubs.bindControlPath("destroy", "destroy", "destroy", "destroy");
        context = stubs.context();
    }

    /** Resolves the fake's control-path symbols; anything else is absent. */
    public SymbolLookup lookup() {
        return stubs.lookup();
    }

    /** The fake {@code struct ibv_context *}. */
    public MemorySegment context() {
        return context;
    }

    public List<PostedSend> postedSends() {
        return List.copyOf(sends);
    }

    public List<PostedReceive> postedReceives() {
        return List.copyOf(receives);
    }

    public List<QpTransition> transitions() {
        return List.copyOf(transitions);
    }

    /** Exceptions thrown inside handlers (turned into error returns); a passing test expects none. */
    public List<Throwable> failures() {
        return List.copyOf(failures);
    }

    /** The next call of {@code function} (symbol or "post_send"/"post_recv") fails with {@code errno}. */
    public synchronized void failNext(String function, int errno) {
        failNext.put(function, errno);
    }

    /** Queues a completion for the next poll. */
    public synchronized void complete(long wrId, int status, int opcode, int byteLength) {
        completions.add(new long[] {wrId, status, opcode, byteLength});
    }

    private synchronized int takeFailure(String function) {
        Integer errno = failNext.remove(function);
        if (errno == null) {
            return 0;
        }
        setErrno(errno);
        return errno;
    }

    private static void setErrno(int errno) {
        UpcallStubs.setErrno(errno);
    }

    private int fail(Throwable t) {
        failures.add(t);
        setErrno(Errno.EINVAL);
        return Errno.EINVAL;
    }

    private int nextHandle() {
        return handles.incrementAndGet();
    }

    // ------------------------------------------------------------------ data path (ops table)

    int postSend(MemorySegment qp, MemorySegment wr, MemorySegment badWr) {
        try {
            int errno = takeFailure("post_send");
            if (errno != 0) {
                badWr.reinterpret(ADDRESS.byteSize()).set(ADDRESS, 0, wr);
                return errno;
            }
            int qpNum = (int) Verbs.ibv_qp$qp_num.get(qp.reinterpret(Verbs.ibv_qp.byteSize()), 0L);
            for (PostedSend send : PostedSend.decodeChain(wr)) {
                sends.add(send);
                if (send.signaled()) {
                    complete(send.wrId(), Verbs.IBV_WC_SUCCESS, completionOpcode(send.opcode()), lengthOf(send), qpNum);
                }
            }
            return 0;
        } catch (Throwable t) {
            return fail(t);
        }
    }

    private synchronized void complete(long wrId, int status, int opcode, int byteLength, int qpNum) {
        completions.add(new long[] {wrId, status, opcode, byteLength, qpNum});
    }

    private static int lengthOf(PostedSend send) {
        return send.sges().stream().mapToInt(PostedSend.Sge::length).sum();
    }

    /** Verbs' IBV_WR_* → IBV_WC_* mapping for successful send completions. */
    public static int completionOpcode(int wrOpcode) {
        if (wrOpcode == Verbs.IBV_WR_RDMA_READ) {
            return Verbs.IBV_WC_RDMA_READ;
        } else if (wrOpcode == Verbs.IBV_WR_RDMA_WRITE || wrOpcode == Verbs.IBV_WR_RDMA_WRITE_WITH_IMM) {
            return Verbs.IBV_WC_RDMA_WRITE;
        } else if (wrOpcode == Verbs.IBV_WR_ATOMIC_CMP_AND_SWP) {
            return Verbs.IBV_WC_COMP_SWAP;
        } else if (wrOpcode == Verbs.IBV_WR_ATOMIC_FETCH_AND_ADD) {
            return Verbs.IBV_WC_FETCH_ADD;
        } else if (wrOpcode == Verbs.IBV_WR_ATOMIC_WRITE) {
            return Verbs.IBV_WC_ATOMIC_WRITE;
        }
        return Verbs.IBV_WC_SEND;
    }

    int postRecv(MemorySegment qp, MemorySegment wr, MemorySegment badWr) {
        try {
            int errno = takeFailure("post_recv");
            if (errno != 0) {
                badWr.reinterpret(ADDRESS.byteSize()).set(ADDRESS, 0, wr);
                return errno;
            }
            receives.addAll(PostedReceive.decodeChain(wr));
            return 0;
        } catch (Throwable t) {
            return fail(t);
        }
    }

    synchronized int pollCq(MemorySegment cq, int max, MemorySegment wc) {
        try {
            int n = Math.min(max, completions.size());
            if (n == 0) {
                return 0;
            }
            WorkCompletions out = new WorkCompletions(wc.reinterpret(Verbs.ibv_wc.byteSize() * n), n);
            for (int i = 0; i < n; i++) {
                long[] c = completions.poll();
                out.put(i, c[0], (int) c[1], (int) c[2], (int) c[3], c.length > 4 ? (int) c[4] : 0);
            }
            return n;
        } catch (Throwable t) {
            return -fail(t);
        }
    }

    int reqNotifyCq(MemorySegment cq, int solicitedOnly) {
        return takeFailure("req_notify_cq");
    }

    // ------------------------------------------------------------------ control path (symbols)

    private MemorySegment object(String function, long size) {
        if (takeFailure(function) != 0) {
            return MemorySegment.NULL;
        }
        MemorySegment object = arena.allocate(size, 8);
        object.set(ADDRESS, 0, context); // every ibv_* object starts with its context pointer
        return object;
    }

    MemorySegment allocPd(MemorySegment ctx) {
        try {
            MemorySegment pd = object("ibv_alloc_pd", Verbs.ibv_pd.byteSize());
            if (!pd.equals(MemorySegment.NULL)) {
                Verbs.ibv_pd$handle.set(pd, 0L, nextHandle());
            }
            return pd;
        } catch (Throwable t) {
            fail(t);
            return MemorySegment.NULL;
        }
    }

    MemorySegment regMr(MemorySegment pd, MemorySegment addr, long length, long iova, int access) {
        try {
            MemorySegment mr = object("ibv_reg_mr_iova2", Verbs.ibv_mr.byteSize());
            if (!mr.equals(MemorySegment.NULL)) {
                int handle = nextHandle();
                Verbs.ibv_mr$pd.set(mr, 0L, pd);
                Verbs.ibv_mr$addr.set(mr, 0L, addr);
                Verbs.ibv_mr$length.set(mr, 0L, length);
                Verbs.ibv_mr$handle.set(mr, 0L, handle);
                Verbs.ibv_mr$lkey.set(mr, 0L, lkeyOf(handle));
                Verbs.ibv_mr$rkey.set(mr, 0L, rkeyOf(handle));
            }
            return mr;
        } catch (Throwable t) {
            fail(t);
            return MemorySegment.NULL;
        }
    }

    /** The keys the fake gives registration number {@code handle}. */
    public static int lkeyOf(int handle) {
        return 0x1000 + handle;
    }

    public static int rkeyOf(int handle) {
        return 0x2000 + handle;
    }

    MemorySegment createCq(MemorySegment ctx, int cqe, MemorySegment cqContext, MemorySegment channel, int vector) {
        try {
            MemorySegment cq = object("ibv_create_cq", Verbs.ibv_cq.byteSize());
            if (!cq.equals(MemorySegment.NULL)) {
                Verbs.ibv_cq$channel.set(cq, 0L, channel);
                Verbs.ibv_cq$cq_context.set(cq, 0L, cqContext);
                Verbs.ibv_cq$handle.set(cq, 0L, nextHandle());
                Verbs.ibv_cq$cqe.set(cq, 0L, cqe);
            }
            return cq;
        } catch (Throwable t) {
            fail(t);
            return MemorySegment.NULL;
        }
    }

    /** QP numbers the fake hands out: 0x100 + handle. */
    MemorySegment createQp(MemorySegment pd, MemorySegment initAttr) {
        try {
            MemorySegment qp = object("ibv_create_qp", Verbs.ibv_qp.byteSize());
            if (!qp.equals(MemorySegment.NULL)) {
                MemorySegment attr = initAttr.reinterpret(Verbs.ibv_qp_init_attr.byteSize());
                int handle = nextHandle();
                Verbs.ibv_qp$pd.set(qp, 0L, pd);
                Verbs.ibv_qp$send_cq.set(qp, 0L, (MemorySegment) Verbs.ibv_qp_init_attr$send_cq.get(attr, 0L));
                Verbs.ibv_qp$recv_cq.set(qp, 0L, (MemorySegment) Verbs.ibv_qp_init_attr$recv_cq.get(attr, 0L));
                Verbs.ibv_qp$handle.set(qp, 0L, handle);
                Verbs.ibv_qp$qp_num.set(qp, 0L, 0x100 + handle);
                Verbs.ibv_qp$state.set(qp, 0L, Verbs.IBV_QPS_RESET);
                Verbs.ibv_qp$qp_type.set(qp, 0L, (int) Verbs.ibv_qp_init_attr$qp_type.get(attr, 0L));
            }
            return qp;
        } catch (Throwable t) {
            fail(t);
            return MemorySegment.NULL;
        }
    }

    int modifyQp(MemorySegment qpPointer, MemorySegment attrPointer, int mask) {
        try {
            int errno = takeFailure("ibv_modify_qp");
            if (errno != 0) {
                return errno;
            }
            MemorySegment qp = qpPointer.reinterpret(Verbs.ibv_qp.byteSize());
            MemorySegment attr = attrPointer.reinterpret(Verbs.ibv_qp_attr.byteSize());
            int state = (int) Verbs.ibv_qp_attr$qp_state.get(attr, 0L);
            if ((mask & Verbs.IBV_QP_STATE) != 0) {
                Verbs.ibv_qp$state.set(qp, 0L, state);
            }
            transitions.add(new QpTransition((int) Verbs.ibv_qp$qp_num.get(qp, 0L), mask, state,
                    (int) Verbs.ibv_qp_attr$dest_qp_num.get(attr, 0L), (int) Verbs.ibv_qp_attr$rq_psn.get(attr, 0L),
                    (int) Verbs.ibv_qp_attr$sq_psn.get(attr, 0L),
                    Short.toUnsignedInt((short) Verbs.ibv_qp_attr$ah_attr$dlid.get(attr, 0L)),
                    (int) Verbs.ibv_qp_attr$qp_access_flags.get(attr, 0L),
                    Byte.toUnsignedInt((byte) Verbs.ibv_qp_attr$port_num.get(attr, 0L))));
            return 0;
        } catch (Throwable t) {
            return fail(t);
        }
    }

    /**
     * What ibv_query_device reports: a device of the classic API only (no query_device_ex, so no ATOMIC_WRITE or
     * FLUSH is claimed) whose atomics are atomic only among themselves (ATOMIC_HCA), like many RoCE NICs.
     */
    public static final DeviceAttributes ATTRIBUTES = new DeviceAttributes("fake 1.0", 0xfa4e, 1, 64, 256, 4, 16, 1024, 64,
            16, Verbs.IBV_ATOMIC_HCA, 0, false);

    int queryDevice(MemorySegment ctx, MemorySegment attr) {
        try {
            int errno = takeFailure("ibv_query_device");
            if (errno != 0) {
                return errno;
            }
            ATTRIBUTES.encode(attr);
            return 0;
        } catch (Throwable t) {
            return fail(t);
        }
    }

    int queryPort(MemorySegment ctx, byte port, MemorySegment attrPointer) {
        try {
            int errno = takeFailure("ibv_query_port");
            if (errno != 0) {
                return errno;
            }
            UpcallStubs.activeInfinibandPort(attrPointer, LID, Verbs.IBV_MTU_1024);
            return 0;
        } catch (Throwable t) {
            return fail(t);
        }
    }

    int queryGid(MemorySegment ctx, byte port, int index, MemorySegment gid) {
        try {
            int errno = takeFailure("ibv_query_gid");
            if (errno != 0) {
                return errno;
            }
            MemorySegment raw = gid.reinterpret(Verbs.ibv_gid.byteSize());
            raw.fill((byte) 0);
            raw.set(JAVA_BYTE, 15, (byte) index);
            return 0;
        } catch (Throwable t) {
            return fail(t);
        }
    }

    /** ibv_dealloc_pd, ibv_dereg_mr, ibv_destroy_cq, ibv_destroy_qp: memory is the arena's. */
    int destroy(MemorySegment object) {
        return 0;
    }

    @Override
    public void close() {
        arena.close();
    }
}
