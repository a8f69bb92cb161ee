package io.erda.softrnic;

import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_BYTE;
import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;

import io.erda.ffm.verbs.Verbs;
import io.erda.ffm.verbs.VerbsOps;
import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.SymbolLookup;
import java.lang.invoke.MethodHandle;
import java.lang.invoke.MethodHandles;
import java.util.HashMap;
import java.util.Map;
import java.util.Optional;

/**
 * What the fake devices share to stand in for native code: a {@code struct ibv_context} (the tail of a
 * {@code struct verbs_context}, marked extended through abi_compat as libibverbs does, so verbs_get_ctx_op finds
 * the slots a fake fills with {@link #extendedOp}) whose ops slots are upcall stubs to the handler's {@code postSend}, {@code postRecv}, {@code pollCq} and {@code reqNotifyCq}; a
 * {@link SymbolLookup} of control-path symbols bound to handler methods; and a way to set the C {@code errno} that a
 * caller captures after the call. Handler methods may be package-private: the lookup passed in must see them.
 */
final class UpcallStubs {
    private static final Linker LINKER = Linker.nativeLinker();
    private static final MethodHandle ERRNO_LOCATION = LINKER.downcallHandle(
            LINKER.defaultLookup().findOrThrow("__errno_location"), FunctionDescriptor.of(ADDRESS));

    private final MethodHandles.Lookup lookup;
    private final Object handler;
    private final Arena arena;
    private final MemorySegment verbsContext;
    private final MemorySegment context;
    private final Map<String, MemorySegment> symbols = new HashMap<>();

    UpcallStubs(MethodHandles.Lookup lookup, Object handler, Arena arena) {
        this.lookup = lookup;
        this.handler = handler;
        this.arena = arena;
        this.verbsContext = arena.allocate(Verbs.verbs_context);
        this.context = verbsContext.asSlice(Verbs.verbs_context$context$OFFSET, Verbs.ibv_context.byteSize());
        Verbs.verbs_context$sz.set(verbsContext, 0L, Verbs.verbs_context.byteSize());
        context.set(ADDRESS, Verbs.ibv_context$abi_compat$OFFSET,
                MemorySegment.ofAddress(Verbs.ERDA_VERBS_ABI_IS_EXTENDED));
        Verbs.ibv_context$num_comp_vectors.set(context, 0L, 1);
        op(Verbs.ibv_context$ops$post_send$OFFSET, "postSend", VerbsOps.POST_SEND_DESC);
        op(Verbs.ibv_context$ops$post_recv$OFFSET, "postRecv", VerbsOps.POST_RECV_DESC);
        op(Verbs.ibv_context$ops$poll_cq$OFFSET, "pollCq", VerbsOps.POLL_CQ_DESC);
        op(Verbs.ibv_context$ops$req_notify_cq$OFFSET, "reqNotifyCq", VerbsOps.REQ_NOTIFY_CQ_DESC);
    }

    /**
     * Binds the control path every fake has: allocPd, regMr, createCq, createQp, modifyQp, queryDevice, queryPort,
     * queryGid, and
     * the four destructors to the named handler methods ({@code int m(MemorySegment)}).
     */
    void bindControlPath(String deallocPd, String deregMr, String destroyCq, String destroyQp) {
        FunctionDescriptor release = FunctionDescriptor.of(JAVA_INT, ADDRESS);
        symbol("ibv_alloc_pd", "allocPd", FunctionDescriptor.of(ADDRESS, ADDRESS));
        symbol("ibv_dealloc_pd", deallocPd, release);
        symbol("ibv_reg_mr_iova2", "regMr", FunctionDescriptor.of(ADDRESS, ADDRESS, ADDRESS, JAVA_LONG, JAVA_LONG, JAVA_INT));
        symbol("ibv_dereg_mr", deregMr, release);
        symbol("ibv_create_cq", "createCq", FunctionDescriptor.of(ADDRESS, ADDRESS, JAVA_INT, ADDRESS, ADDRESS, JAVA_INT));
        symbol("ibv_destroy_cq", destroyCq, release);
        symbol("ibv_create_qp", "createQp", FunctionDescriptor.of(ADDRESS, ADDRESS, ADDRESS));
        symbol("ibv_destroy_qp", destroyQp, release);
        symbol("ibv_modify_qp", "modifyQp", FunctionDescriptor.of(JAVA_INT, ADDRESS, ADDRESS, JAVA_INT));
        symbol("ibv_query_device", "queryDevice", FunctionDescriptor.of(JAVA_INT, ADDRESS, ADDRESS));
        symbol("ibv_query_port", "queryPort", FunctionDescriptor.of(JAVA_INT, ADDRESS, JAVA_BYTE, ADDRESS));
        symbol("ibv_query_gid", "queryGid", FunctionDescriptor.of(JAVA_INT, ADDRESS, JAVA_BYTE, JAVA_INT, ADDRESS));
    }

    /** An upcall stub to the handler's {@code method}, for a function-pointer slot the fake fills itself. */
    MemorySegment stub(String method, FunctionDescriptor descriptor) {
        return stub(handler, method, descriptor);
    }

    /** An upcall stub to {@code method} of another handler in this package (e.g. the device's rdma_cm). */
    MemorySegment stub(Object target, String method, FunctionDescriptor descriptor) {
        try {
            MethodHandle bound = lookup.findVirtual(target.getClass(), method, descriptor.toMethodType()).bindTo(target);
            return LINKER.upcallStub(bound, descriptor, arena);
        } catch (ReflectiveOperationException e) {
            throw new IllegalStateException("fake handler " + method + " does not match " + descriptor, e);
        }
    }

    private void op(long offset, String method, FunctionDescriptor descriptor) {
        context.set(ADDRESS, offset, stub(method, descriptor));
    }

    /** Fills a {@code struct verbs_context} slot, e.g. {@link Verbs#verbs_context$create_qp_ex$OFFSET}. */
    void extendedOp(long vctxOffset, String method, FunctionDescriptor descriptor) {
        verbsContext.set(ADDRESS, vctxOffset, stub(method, descriptor));
    }

    void symbol(String name, String method, FunctionDescriptor descriptor) {
        symbols.put(name, stub(method, descriptor));
    }

    void symbol(String name, Object target, String method, FunctionDescriptor descriptor) {
        symbols.put(name, stub(target, method, descriptor));
    }

    /** The names {@link #lookup()} answers. */
    java.util.Set<String> symbolNames() {
        return java.util.Set.copyOf(symbols.keySet());
    }

    SymbolLookup lookup() {
        return name -> Optional.ofNullable(symbols.get(name));
    }

    MemorySegment context() {
        return context;
    }

    /** Fills a {@code struct ibv_port_attr} for an active InfiniBand port (peers address it by LID, not GID). */
    static void activeInfinibandPort(MemorySegment attrPointer, int lid, int activeMtu) {
        MemorySegment attr = attrPointer.reinterpret(Verbs.ibv_port_attr.byteSize());
        Verbs.ibv_port_attr$state.set(attr, 0L, Verbs.IBV_PORT_ACTIVE);
        Verbs.ibv_port_attr$max_mtu.set(attr, 0L, Verbs.IBV_MTU_4096);
        Verbs.ibv_port_attr$active_mtu.set(attr, 0L, activeMtu);
        Verbs.ibv_port_attr$gid_tbl_len.set(attr, 0L, 1);
        Verbs.ibv_port_attr$lid.set(attr, 0L, (short) lid);
        Verbs.ibv_port_attr$link_layer.set(attr, 0L, (byte) Verbs.IBV_LINK_LAYER_INFINIBAND);
    }

    static void setErrno(int errno) {
        try {
            ((MemorySegment) ERRNO_LOCATION.invokeExact()).reinterpret(JAVA_INT.byteSize()).set(JAVA_INT, 0, errno);
        } catch (Throwable t) {
            throw new IllegalStateException(t);
        }
    }
}
