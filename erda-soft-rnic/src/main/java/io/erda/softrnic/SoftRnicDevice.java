package io.erda.softrnic;

import static java.lang.foreign.ValueLayout.ADDRESS;

import io.erda.ffm.verbs.DeviceAttributes;
import io.erda.ffm.verbs.Errno;
import io.erda.ffm.verbs.NativeCapabilities;
import io.erda.ffm.verbs.SoftwareRnic;
import io.erda.ffm.verbs.Verbs;
import io.erda.ffm.verbs.VerbsLibrary;
import io.erda.ffm.verbs.VerbsOps;
import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.SymbolLookup;
import java.lang.invoke.MethodHandles;
import java.util.List;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * One port of a {@link SoftRnic}: a {@code struct ibv_context} whose ops table (post_send, post_recv, poll_cq,
 * req_notify_cq) holds upcall stubs, and a {@link SymbolLookup} whose control-path symbols (ibv_alloc_pd,
 * ibv_reg_mr_iova2, ibv_create_cq, ibv_create_qp, ibv_modify_qp, ibv_query_port, ...) are upcall stubs too. Code
 * under test runs unchanged: {@code new VerbsLibrary(device.lookup())} and
 * {@code IbvContext.wrap(verbs, device.context())}.
 *
 * <p>Every object it hands out is a real struct in native memory (ibv_pd, ibv_mr with lkey/rkey, ibv_cq, ibv_qp with
 * qp_num and state), and every work request is decoded from the caller's {@code ibv_send_wr}/{@code ibv_recv_wr}
 * chain and executed by the queue pair ({@link SoftQueuePair}). Besides libibverbs' symbols the lookup has two
 * extensions, {@link VerbsLibrary#SOFT_RNIC_WRITE_DELAY}, the PM write-latency model of a registration, and
 * {@link VerbsLibrary#SOFT_RNIC_DURABLE_MIRROR}, a second copy every one-sided write is placed in (power-failure
 * emulation): a real libibverbs has no such symbols, so callers find them absent there.
 *
 * <p>It also has the extended QP API of rdma-core v44: {@code verbs_context.create_qp_ex} is an upcall
 * ({@link #createQpEx}), so is {@code ibv_qp_to_qp_ex}, and the QPs it makes are {@code struct ibv_qp_ex} whose
 * {@code wr_start}, {@code wr_rdma_write}, {@code wr_rdma_read}, {@code wr_atomic_write}, {@code wr_set_sge},
 * {@code wr_complete} and {@code wr_abort} slots are upcalls collecting a batch ({@link ExtendedBatch}) that
 * wr_complete hands to the same queue pair engine as post_send. The lookup also has librdmacm's symbols, for
 * connection set-up through an emulated CM ({@link SoftRdmaCm}). It stands for a v44 library
 * ({@link #RDMA_CORE_VERSION}) and a device with ATOMIC_WRITE; native FLUSH (v45) is not modelled.
 *
 * <p>A handler never lets an exception escape into native code (that would crash the JVM): it is recorded in
 * {@link #failures()} and turned into an error return.
 */
public final class SoftRnicDevice implements SoftwareRnic.Device {
    /** The rdma-core release this device's symbols stand for: ATOMIC_WRITE yes, FLUSH (45) no. */
    public static final int RDMA_CORE_VERSION = NativeCapabilities.ATOMIC_WRITE_SINCE;
    /** The IBV_QP_EX_WITH_* operations create_qp_ex accepts; others fail with EOPNOTSUPP as on a real device. */
    static final long SEND_OPS = Verbs.IBV_QP_EX_WITH_RDMA_WRITE | Verbs.IBV_QP_EX_WITH_RDMA_WRITE_WITH_IMM
            | Verbs.IBV_QP_EX_WITH_SEND | Verbs.IBV_QP_EX_WITH_RDMA_READ | Verbs.IBV_QP_EX_WITH_ATOMIC_CMP_AND_SWP
            | Verbs.IBV_QP_EX_WITH_ATOMIC_FETCH_AND_ADD | Verbs.IBV_QP_EX_WITH_ATOMIC_WRITE;

    private final SoftRnic network;
    private final int lid;
    private final Arena arena = Arena.ofShared();
    private final MemorySegment context;
    private final UpcallStubs stubs;
    private final ConcurrentHashMap<Integer, SoftMemoryRegion> byLkey = new ConcurrentHashMap<>();
    private final ConcurrentHashMap<Integer, SoftMemoryRegion> byRkey = new ConcurrentHashMap<>();
    private final ConcurrentHashMap<Long, SoftMemoryRegion> byMr = new ConcurrentHashMap<>();
    private final ConcurrentHashMap<Long, SoftCompletionQueue> cqs = new ConcurrentHashMap<>();
    private final ConcurrentHashMap<Long, SoftQueuePair> qpsByAddress = new ConcurrentHashMap<>();
    private final ConcurrentHashMap<Integer, SoftQueuePair> qpsByNum = new ConcurrentHashMap<>();
    private final ConcurrentHashMap<Long, ExtendedBatch> batches = new ConcurrentHashMap<>();
    private final MemorySegment wrStart;
    private final MemorySegment wrComplete;
    private final MemorySegment wrAbort;
    private final MemorySegment wrRdmaWrite;
    private final MemorySegment wrRdmaRead;
    private final MemorySegment wrAtomicWrite;
    private final MemorySegment wrSetSge;
    private final List<Throwable> failures = new CopyOnWriteArrayList<>();
    private final AtomicInteger handles = new AtomicInteger();
    private final SoftRdmaCm cm;

    SoftRnicDevice(SoftRnic network, int lid) {
        this.network = network;
        this.lid = lid;
        stubs = new UpcallStubs(MethodHandles.lookup(), this, arena);
        stubs.bindControlPath("release", "deregMr", "destroyCq", "destroyQp");
        stubs.symbol(VerbsLibrary.SOFT_RNIC_WRITE_DELAY, "setWriteDelay", VerbsLibrary.SOFT_RNIC_WRITE_DELAY_DESC);
        stubs.symbol(VerbsLibrary.SOFT_RNIC_DURABLE_MIRROR, "setDurableMirror", VerbsLibrary.SOFT_RNIC_DURABLE_MIRROR_DESC);
        stubs.extendedOp(Verbs.verbs_context$create_qp_ex$OFFSET, "createQpEx", VerbsLibrary.CREATE_QP_EX);
        stubs.extendedOp(Verbs.verbs_context$query_device_ex$OFFSET, "queryDeviceEx", VerbsLibrary.QUERY_DEVICE_EX);
        stubs.symbol("ibv_qp_to_qp_ex", "qpToQpEx", FunctionDescriptor.of(ADDRESS, ADDRESS));
        wrStart = stubs.stub("wrStart", VerbsOps.WR_START_DESC);
        wrComplete = stubs.stub("wrComplete", VerbsOps.WR_COMPLETE_DESC);
        wrAbort = stubs.stub("wrAbort", VerbsOps.WR_START_DESC);
        wrRdmaWrite = stubs.stub("wrRdmaWrite", VerbsOps.WR_RDMA_DESC);
        wrRdmaRead = stubs.stub("wrRdmaRead", VerbsOps.WR_RDMA_DESC);
        wrAtomicWrite = stubs.stub("wrAtomicWrite", VerbsOps.WR_ATOMIC_WRITE_DESC);
        wrSetSge = stubs.stub("wrSetSge", VerbsOps.WR_SET_SGE_DESC);
        context = stubs.context();
        cm = new SoftRdmaCm(this, arena, stubs);
    }

    /** Every symbol {@link #lookup()} resolves (tests check that the real libraries export each of them). */
    public java.util.Set<String> symbolNames() {
        return stubs.symbolNames();
    }

    /** Resolves the fake's control-path symbols; anything else is absent. */
    @Override
    public SymbolLookup lookup() {
        return stubs.lookup();
    }

    /** The fake {@code struct ibv_context *}. */
    @Override
    public MemorySegment context() {
        return context;
    }

    /** The LID {@code ibv_query_port} reports; peers address this device's QPs by it. */
    public int lid() {
        return lid;
    }

    /** Exceptions thrown inside handlers (turned into error returns); a passing test expects none. */
    public List<Throwable> failures() {
        return List.copyOf(failures);
    }

    SoftRnic network() {
        return network;
    }

    SoftQueuePair queuePair(int qpNum) {
        return qpsByNum.get(qpNum);
    }

    SoftMemoryRegion regionByLkey(int lkey) {
        return byLkey.get(lkey);
    }

    SoftMemoryRegion regionByRkey(int rkey) {
        return byRkey.get(rkey);
    }

    void recordFailure(Throwable t) {
        failures.add(t);
    }

    private int fail(Throwable t) {
        failures.add(t);
        UpcallStubs.setErrno(Errno.EINVAL);
        return Errno.EINVAL;
    }

    private MemorySegment failNull(int errno) {
        UpcallStubs.setErrno(errno);
        return MemorySegment.NULL;
    }

    private MemorySegment object(long size) {
        MemorySegment object = arena.allocate(size, 8);
        object.set(ADDRESS, 0, context); // every ibv_* object starts with its context pointer
        return object;
    }

    // ------------------------------------------------------------------ data path (ops table)

    int postSend(MemorySegment qp, MemorySegment wr, MemorySegment badWr) {
        try {
            SoftQueuePair queuePair = qpsByAddress.get(qp.address());
            int errno = queuePair == null ? Errno.EINVAL : queuePair.postSend(PostedSend.decodeChain(wr));
            if (errno != 0) {
                badWr.reinterpret(ADDRESS.byteSize()).set(ADDRESS, 0, wr);
            }
            return errno;
        } catch (Throwable t) {
            return fail(t);
        }
    }

    int postRecv(MemorySegment qp, MemorySegment wr, MemorySegment badWr) {
        try {
            SoftQueuePair queuePair = qpsByAddress.get(qp.address());
            int errno = queuePair == null ? Errno.EINVAL : queuePair.postRecv(PostedReceive.decodeChain(wr));
            if (errno != 0) {
                badWr.reinterpret(ADDRESS.byteSize()).set(ADDRESS, 0, wr);
            }
            return errno;
        } catch (Throwable t) {
            return fail(t);
        }
    }

    int pollCq(MemorySegment cq, int max, MemorySegment wc) {
        try {
            SoftCompletionQueue queue = cqs.get(cq.address());
            return queue == null ? -Errno.EINVAL : queue.poll(max, wc);
        } catch (Throwable t) {
            return -fail(t);
        }
    }

    /** Completion channels are not modelled: consumers of this device poll. */
    int reqNotifyCq(MemorySegment cq, int solicitedOnly) {
        return Errno.EOPNOTSUPP;
    }

    // ------------------------------------------------------------------ control path (symbols)

    MemorySegment allocPd(MemorySegment ctx) {
        try {
            MemorySegment pd = object(Verbs.ibv_pd.byteSize());
            Verbs.ibv_pd$handle.set(pd, 0L, handles.incrementAndGet());
            return pd;
        } catch (Throwable t) {
            fail(t);
            return MemorySegment.NULL;
        }
    }

    /** ibv_dealloc_pd: the struct's memory is the device's until it closes. */
    int release(MemorySegment object) {
        return 0;
    }

    MemorySegment regMr(MemorySegment pd, MemorySegment addr, long length, long iova, int access) {
        try {
            boolean remoteWriteOrAtomic = (access & (Verbs.IBV_ACCESS_REMOTE_WRITE | Verbs.IBV_ACCESS_REMOTE_ATOMIC)) != 0;
            if (remoteWriteOrAtomic && (access & Verbs.IBV_ACCESS_LOCAL_WRITE) == 0) {
                return failNull(Errno.EINVAL); // as ibv_reg_mr: remote write or atomic needs local write
            }
            if (iova != addr.address() || length <= 0) {
                return failNull(Errno.EINVAL);
            }
            MemorySegment mr = object(Verbs.ibv_mr.byteSize());
            int handle = handles.incrementAndGet();
            // Keys are never reused, so a stale rkey can never reach a new registration; the low byte keeps a key
            // plus a small offset from landing on another handle's key.
            int lkey = handle << 8 | 0x11;
            int rkey = handle << 8 | 0x22;
            Verbs.ibv_mr$pd.set(mr, 0L, pd);
            Verbs.ibv_mr$addr.set(mr, 0L, addr);
            Verbs.ibv_mr$length.set(mr, 0L, length);
            Verbs.ibv_mr$handle.set(mr, 0L, handle);
            Verbs.ibv_mr$lkey.set(mr, 0L, lkey);
            Verbs.ibv_mr$rkey.set(mr, 0L, rkey);
            SoftMemoryRegion region = new SoftMemoryRegion(mr, addr.reinterpret(length), lkey, rkey, access);
            byMr.put(mr.address(), region);
            byLkey.put(lkey, region);
            byRkey.put(rkey, region);
            return mr;
        } catch (Throwable t) {
            fail(t);
            return MemorySegment.NULL;
        }
    }

    int deregMr(MemorySegment mr) {
        try {
            SoftMemoryRegion region = byMr.remove(mr.address());
            if (region == null) {
                return Errno.EINVAL;
            }
            network.exclusively(() -> {
                byLkey.remove(region.lkey);
                byRkey.remove(region.rkey);
            });
            return 0;
        } catch (Throwable t) {
            return fail(t);
        }
    }

    int setWriteDelay(MemorySegment mr, long nanosPerLine) {
        SoftMemoryRegion region = byMr.get(mr.address());
        if (region == null || nanosPerLine < 0) {
            return Errno.EINVAL;
        }
        region.writeDelayNanosPerLine = nanosPerLine;
        return 0;
    }

    int setDurableMirror(MemorySegment mr, MemorySegment mirror, long length, MemorySegment lock) {
        SoftMemoryRegion region = byMr.get(mr.address());
        if (region == null || length != region.memory.byteSize() || mirror.address() == 0 || lock.address() == 0
                || lock.address() % Long.BYTES != 0) {
            return Errno.EINVAL;
        }
        region.mirrorLock = lock.reinterpret(Long.BYTES);
        region.mirror = mirror.reinterpret(length);
        return 0;
    }

    MemorySegment createCq(MemorySegment ctx, int cqe, MemorySegment cqContext, MemorySegment channel, int vector) {
        try {
            if (cqe <= 0 || cqe > ATTRIBUTES.maxCqe()) {
                return failNull(Errno.EINVAL); // as rxe and mlx5 answer a CQ above max_cqe
            }
            MemorySegment cq = object(Verbs.ibv_cq.byteSize());
            Verbs.ibv_cq$channel.set(cq, 0L, channel);
            Verbs.ibv_cq$cq_context.set(cq, 0L, cqContext);
            Verbs.ibv_cq$handle.set(cq, 0L, handles.incrementAndGet());
            Verbs.ibv_cq$cqe.set(cq, 0L, cqe);
            cqs.put(cq.address(), new SoftCompletionQueue());
            return cq;
        } catch (Throwable t) {
            fail(t);
            return MemorySegment.NULL;
        }
    }

    /** As the kernel does: EBUSY while a QP still reports to the CQ (its use count is not zero). */
    int destroyCq(MemorySegment cq) {
        SoftCompletionQueue queue = cqs.get(cq.address());
        if (queue == null) {
            return Errno.EINVAL;
        }
        if (qpsByAddress.values().stream().anyMatch(qp -> qp.reportsTo(queue))) {
            return Errno.EBUSY;
        }
        return cqs.remove(cq.address(), queue) ? 0 : Errno.EINVAL;
    }

    MemorySegment createQp(MemorySegment pd, MemorySegment initAttrPointer) {
        try {
            return newQueuePair(pd, initAttrPointer.reinterpret(Verbs.ibv_qp_init_attr.byteSize()), Verbs.ibv_qp.byteSize());
        } catch (Throwable t) {
            fail(t);
            return MemorySegment.NULL;
        }
    }

    /**
     * verbs_context.create_qp_ex: PD and send-ops flags required; a send op this device lacks is EOPNOTSUPP. The QP
     * is a {@code struct ibv_qp_ex} (qp_base first) whose wr_* slots are this device's upcalls.
     */
    MemorySegment createQpEx(MemorySegment ctx, MemorySegment attrPointer) {
        try {
            MemorySegment attr = attrPointer.reinterpret(Verbs.ibv_qp_init_attr_ex.byteSize());
            int mask = (int) Verbs.ibv_qp_init_attr_ex$comp_mask.get(attr, 0L);
            long ops = (long) Verbs.ibv_qp_init_attr_ex$send_ops_flags.get(attr, 0L);
            int needed = Verbs.IBV_QP_INIT_ATTR_PD | Verbs.IBV_QP_INIT_ATTR_SEND_OPS_FLAGS;
            if ((mask & needed) != needed || (mask & ~needed) != 0) {
                return failNull(Errno.EINVAL);
            }
            if ((ops & ~SEND_OPS) != 0) {
                return failNull(Errno.EOPNOTSUPP);
            }
            MemorySegment qp = newQueuePair((MemorySegment) Verbs.ibv_qp_init_attr_ex$pd.get(attr, 0L), attr,
                    Verbs.ibv_qp_ex.byteSize());
            if (qp.equals(MemorySegment.NULL)) {
                return qp;
            }
            qp.set(ADDRESS, Verbs.ibv_qp_ex$wr_start$OFFSET, wrStart);
            qp.set(ADDRESS, Verbs.ibv_qp_ex$wr_complete$OFFSET, wrComplete);
            qp.set(ADDRESS, Verbs.ibv_qp_ex$wr_abort$OFFSET, wrAbort);
            qp.set(ADDRESS, Verbs.ibv_qp_ex$wr_rdma_write$OFFSET, wrRdmaWrite);
            qp.set(ADDRESS, Verbs.ibv_qp_ex$wr_rdma_read$OFFSET, wrRdmaRead);
            qp.set(ADDRESS, Verbs.ibv_qp_ex$wr_set_sge$OFFSET, wrSetSge);
            if ((ops & Verbs.IBV_QP_EX_WITH_ATOMIC_WRITE) != 0) {
                qp.set(ADDRESS, Verbs.ibv_qp_ex$wr_atomic_write$OFFSET, wrAtomicWrite);
            }
            batches.put(qp.address(), new ExtendedBatch(qp));
            return qp;
        } catch (Throwable t) {
            fail(t);
            return MemorySegment.NULL;
        }
    }

    /** ibv_qp_to_qp_ex: the QP itself (qp_base is at offset 0) if create_qp_ex made it, else NULL. */
    MemorySegment qpToQpEx(MemorySegment qp) {
        return batches.containsKey(qp.address()) ? qp : MemorySegment.NULL;
    }

    /** QP numbers are 0x100 + a handle: unique on this device, which is all an RC peer needs with the LID. */
    private MemorySegment newQueuePair(MemorySegment pd, MemorySegment attr, long structSize) {
        MemorySegment sendCqPointer = (MemorySegment) Verbs.ibv_qp_init_attr$send_cq.get(attr, 0L);
        MemorySegment recvCqPointer = (MemorySegment) Verbs.ibv_qp_init_attr$recv_cq.get(attr, 0L);
        SoftCompletionQueue sendCq = cqs.get(sendCqPointer.address());
        SoftCompletionQueue recvCq = cqs.get(recvCqPointer.address());
        if (sendCq == null || recvCq == null || (int) Verbs.ibv_qp_init_attr$qp_type.get(attr, 0L) != Verbs.IBV_QPT_RC) {
            return failNull(Errno.EINVAL);
        }
        MemorySegment qp = object(structSize);
        int handle = handles.incrementAndGet();
        int qpNum = 0x100 + handle;
        Verbs.ibv_qp$pd.set(qp, 0L, pd);
        Verbs.ibv_qp$send_cq.set(qp, 0L, sendCqPointer);
        Verbs.ibv_qp$recv_cq.set(qp, 0L, recvCqPointer);
        Verbs.ibv_qp$handle.set(qp, 0L, handle);
        Verbs.ibv_qp$qp_num.set(qp, 0L, qpNum);
        Verbs.ibv_qp$state.set(qp, 0L, Verbs.IBV_QPS_RESET);
        Verbs.ibv_qp$qp_type.set(qp, 0L, Verbs.IBV_QPT_RC);
        SoftQueuePair queuePair = new SoftQueuePair(this, qp, qpNum, sendCq, recvCq,
                (int) Verbs.ibv_qp_init_attr$cap$max_recv_wr.get(attr, 0L));
        qpsByAddress.put(qp.address(), queuePair);
        qpsByNum.put(qpNum, queuePair);
        return qp;
    }

    // ------------------------------------------------------------------ data path (ibv_qp_ex wr_* slots)

    private ExtendedBatch batch(MemorySegment qpx) {
        ExtendedBatch batch = batches.get(qpx.address());
        if (batch == null) {
            throw new IllegalStateException("wr_* call on 0x" + Long.toHexString(qpx.address())
                    + ", not a QP from create_qp_ex");
        }
        return batch;
    }

    void wrStart(MemorySegment qpx) {
        try {
            batch(qpx).start();
        } catch (Throwable t) {
            recordFailure(t);
        }
    }

    void wrRdmaWrite(MemorySegment qpx, int rkey, long remoteAddress) {
        try {
            batch(qpx).add(Verbs.IBV_WR_RDMA_WRITE, rkey, remoteAddress, 0);
        } catch (Throwable t) {
            recordFailure(t);
        }
    }

    void wrRdmaRead(MemorySegment qpx, int rkey, long remoteAddress) {
        try {
            batch(qpx).add(Verbs.IBV_WR_RDMA_READ, rkey, remoteAddress, 0);
        } catch (Throwable t) {
            recordFailure(t);
        }
    }

    /** The 8 bytes at {@code value} are read now, as a provider copies them into its WQE. */
    void wrAtomicWrite(MemorySegment qpx, int rkey, long remoteAddress, MemorySegment value) {
        try {
            long word = value.reinterpret(Long.BYTES).get(java.lang.foreign.ValueLayout.JAVA_LONG_UNALIGNED, 0);
            batch(qpx).add(Verbs.IBV_WR_ATOMIC_WRITE, rkey, remoteAddress, word);
        } catch (Throwable t) {
            recordFailure(t);
        }
    }

    void wrSetSge(MemorySegment qpx, int lkey, long address, int length) {
        try {
            batch(qpx).setSge(new PostedSend.Sge(address, length, lkey));
        } catch (Throwable t) {
            recordFailure(t);
        }
    }

    /** Posts the batch like post_send; a call out of order earlier in the batch fails it with EINVAL. */
    int wrComplete(MemorySegment qpx) {
        try {
            ExtendedBatch batch = batch(qpx);
            List<PostedSend> requests = batch.complete();
            if (requests == null) {
                return Errno.EINVAL;
            }
            SoftQueuePair queuePair = qpsByAddress.get(qpx.address());
            return queuePair == null ? Errno.EINVAL : queuePair.postSend(requests);
        } catch (Throwable t) {
            return fail(t);
        }
    }

    void wrAbort(MemorySegment qpx) {
        try {
            batch(qpx).abort();
        } catch (Throwable t) {
            recordFailure(t);
        }
    }

    int destroyQp(MemorySegment qp) {
        try {
            SoftQueuePair queuePair = qpsByAddress.remove(qp.address());
            if (queuePair == null) {
                return Errno.EINVAL;
            }
            batches.remove(qp.address());
            qpsByNum.remove(queuePair.qpNum());
            network.exclusively(queuePair::destroy);
            return 0;
        } catch (Throwable t) {
            return fail(t);
        }
    }

    int modifyQp(MemorySegment qp, MemorySegment attr, int mask) {
        try {
            SoftQueuePair queuePair = qpsByAddress.get(qp.address());
            return queuePair == null ? Errno.EINVAL
                    : queuePair.modify(attr.reinterpret(Verbs.ibv_qp_attr.byteSize()), mask);
        } catch (Throwable t) {
            return fail(t);
        }
    }

    /**
     * What ibv_query_device(_ex) reports: limits of the order of a ConnectX (max_qp_wr 32768, max_cqe 4194303),
     * atomics that are atomic against the target CPU's (ATOMIC_GLOB: the soft RNIC executes them with the same
     * VarHandle atomics a CPU would use) and ATOMIC_WRITE in device_cap_flags_ex; no FLUSH (not modelled).
     */
    public static final DeviceAttributes ATTRIBUTES = new DeviceAttributes("soft-rnic 1.0", 0x50f7, 44, 1 << 16, 32768,
            30, 1 << 16, 4194303, 1 << 20, 16, Verbs.IBV_ATOMIC_GLOB, Verbs.ERDA_DEVICE_ATOMIC_WRITE, true);

    int queryDevice(MemorySegment ctx, MemorySegment attr) {
        try {
            ATTRIBUTES.encode(attr);
            return 0;
        } catch (Throwable t) {
            return fail(t);
        }
    }

    /** verbs_context.query_device_ex; the input's comp_mask must be 0 (nothing optional is asked for). */
    int queryDeviceEx(MemorySegment ctx, MemorySegment input, MemorySegment attrEx, long attrSize) {
        try {
            if (attrSize < Verbs.ibv_device_attr_ex.byteSize()) {
                return Errno.EINVAL;
            }
            ATTRIBUTES.encodeExtended(attrEx);
            return 0;
        } catch (Throwable t) {
            return fail(t);
        }
    }

    int queryPort(MemorySegment ctx, byte port, MemorySegment attrPointer) {
        try {
            if (port != 1) {
                return Errno.EINVAL;
            }
            UpcallStubs.activeInfinibandPort(attrPointer, lid, Verbs.IBV_MTU_4096);
            return 0;
        } catch (Throwable t) {
            return fail(t);
        }
    }

    /** An InfiniBand port: GIDs are not used for addressing, all zero. */
    int queryGid(MemorySegment ctx, byte port, int index, MemorySegment gid) {
        gid.reinterpret(Verbs.ibv_gid.byteSize()).fill((byte) 0);
        return 0;
    }

    /** Destroys what is left, waits out copies in progress, and frees the structs and stubs. */
    @Override
    public void close() {
        cm.close();
        network.detach(this);
        network.exclusively(() -> qpsByAddress.values().forEach(SoftQueuePair::destroy));
        qpsByAddress.clear();
        qpsByNum.clear();
        byLkey.clear();
        byRkey.clear();
        arena.close();
    }
}
