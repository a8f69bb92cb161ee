package io.erda.ffm.verbs.fake;

import static java.lang.foreign.ValueLayout.ADDRESS;

import io.erda.ffm.verbs.Errno;
import io.erda.ffm.verbs.Verbs;
import io.erda.ffm.verbs.VerbsLibrary;
import java.lang.foreign.Arena;
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
 * chain and executed by the queue pair ({@link SoftQueuePair}). Besides libibverbs' symbols the lookup has one
 * extension, {@link VerbsLibrary#SOFT_RNIC_WRITE_DELAY}, the PM write-latency model of a registration: a real
 * libibverbs has no such symbol, so callers find it absent there.
 *
 * <p>A handler never lets an exception escape into native code (that would crash the JVM): it is recorded in
 * {@link #failures()} and turned into an error return.
 */
public final class SoftRnicDevice implements AutoCloseable {
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
    private final List<Throwable> failures = new CopyOnWriteArrayList<>();
    private final AtomicInteger handles = new AtomicInteger();

    SoftRnicDevice(SoftRnic network, int lid) {
        this.network = network;
        this.lid = lid;
        stubs = new UpcallStubs(MethodHandles.lookup(), this, arena);
        stubs.bindControlPath("release", "deregMr", "destroyCq", "destroyQp");
        stubs.symbol(VerbsLibrary.SOFT_RNIC_WRITE_DELAY, "setWriteDelay", VerbsLibrary.SOFT_RNIC_WRITE_DELAY_DESC);
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

    MemorySegment createCq(MemorySegment ctx, int cqe, MemorySegment cqContext, MemorySegment channel, int vector) {
        try {
            if (cqe <= 0) {
                return failNull(Errno.EINVAL);
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

    int destroyCq(MemorySegment cq) {
        return cqs.remove(cq.address()) == null ? Errno.EINVAL : 0;
    }

    /** QP numbers are 0x100 + a handle: unique on this device, which is all an RC peer needs with the LID. */
    MemorySegment createQp(MemorySegment pd, MemorySegment initAttrPointer) {
        try {
            MemorySegment attr = initAttrPointer.reinterpret(Verbs.ibv_qp_init_attr.byteSize());
            MemorySegment sendCqPointer = (MemorySegment) Verbs.ibv_qp_init_attr$send_cq.get(attr, 0L);
            MemorySegment recvCqPointer = (MemorySegment) Verbs.ibv_qp_init_attr$recv_cq.get(attr, 0L);
            SoftCompletionQueue sendCq = cqs.get(sendCqPointer.address());
            SoftCompletionQueue recvCq = cqs.get(recvCqPointer.address());
            if (sendCq == null || recvCq == null || (int) Verbs.ibv_qp_init_attr$qp_type.get(attr, 0L) != Verbs.IBV_QPT_RC) {
                return failNull(Errno.EINVAL);
            }
            MemorySegment qp = object(Verbs.ibv_qp.byteSize());
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
        } catch (Throwable t) {
            fail(t);
            return MemorySegment.NULL;
        }
    }

    int destroyQp(MemorySegment qp) {
        try {
            SoftQueuePair queuePair = qpsByAddress.remove(qp.address());
            if (queuePair == null) {
                return Errno.EINVAL;
            }
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
        network.detach(this);
        network.exclusively(() -> qpsByAddress.values().forEach(SoftQueuePair::destroy));
        qpsByAddress.clear();
        qpsByNum.clear();
        byLkey.clear();
        byRkey.clear();
        arena.close();
    }
}
