package io.erda.ffm.verbs;

import static java.lang.foreign.ValueLayout.ADDRESS;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.Objects;

/** An open device ({@code struct ibv_context *}), real or fake. Not thread-safe to close. */
public final class IbvContext implements AutoCloseable {
    private final VerbsLibrary verbs;
    private final MemorySegment context;
    private final boolean owned;

    private IbvContext(VerbsLibrary verbs, MemorySegment context, boolean owned) {
        this.verbs = Objects.requireNonNull(verbs);
        this.context = context.reinterpret(Verbs.ibv_context.byteSize());
        this.owned = owned;
    }

    /** Opens a device by name, or the first device for null. */
    public static IbvContext open(VerbsLibrary verbs, String deviceName) {
        return new IbvContext(verbs, verbs.openDevice(deviceName), true);
    }

    /** Wraps a context opened elsewhere (rdma_cm's {@code id->verbs}, a fake); close() leaves it open. */
    public static IbvContext wrap(VerbsLibrary verbs, MemorySegment context) {
        return new IbvContext(verbs, context, false);
    }

    public VerbsLibrary verbs() {
        return verbs;
    }

    public MemorySegment segment() {
        return context;
    }

    /** A function pointer of the ops table, e.g. {@link Verbs#IBV_CONTEXT_OPS_POST_SEND_OFFSET}. */
    static MemorySegment op(MemorySegment context, long opsOffset) {
        return context.reinterpret(Verbs.ibv_context.byteSize()).get(ADDRESS, opsOffset);
    }

    /**
     * verbs_get_ctx_op(context, op) of verbs.h: the function pointer at {@code vctxOffset} (e.g.
     * {@link Verbs#verbs_context$create_qp_ex$OFFSET}) of the {@code struct verbs_context} that ends with this
     * ibv_context, or null when the context is not extended (abi_compat), the provider's verbs_context is too short
     * to have the slot (sz), or the slot is NULL: each means the provider does not implement the operation.
     */
    static MemorySegment extendedOp(MemorySegment context, long vctxOffset) {
        MemorySegment ctx = context.reinterpret(Verbs.ibv_context.byteSize());
        if (ctx.get(ADDRESS, Verbs.ibv_context$abi_compat$OFFSET).address() != Verbs.ERDA_VERBS_ABI_IS_EXTENDED) {
            return null;
        }
        MemorySegment vctx = MemorySegment.ofAddress(ctx.address() - Verbs.verbs_context$context$OFFSET)
                .reinterpret(Verbs.verbs_context.byteSize());
        long sz = (long) Verbs.verbs_context$sz.get(vctx, 0L);
        if (sz < Verbs.verbs_context.byteSize() - vctxOffset) {
            return null;
        }
        MemorySegment function = vctx.get(ADDRESS, vctxOffset);
        return function.equals(MemorySegment.NULL) ? null : function;
    }

    /** ibv_query_device, and ibv_query_device_ex where the provider has it (for device_cap_flags_ex). */
    public DeviceAttributes queryDevice() {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment attrEx = arena.allocate(Verbs.ibv_device_attr_ex);
            if (verbs.queryDeviceEx(context, attrEx)) {
                return DeviceAttributes.decode(attrEx.asSlice(Verbs.ibv_device_attr_ex$orig_attr$OFFSET,
                        Verbs.ibv_device_attr.byteSize()), (long) Verbs.ibv_device_attr_ex$device_cap_flags_ex.get(attrEx, 0L), true);
            }
            MemorySegment attr = arena.allocate(Verbs.ibv_device_attr);
            verbs.queryDevice(context, attr);
            return DeviceAttributes.decode(attr, 0, false);
        }
    }

    public PortAttributes queryPort(int port) {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment attr = arena.allocate(Verbs.ibv_port_attr);
            verbs.queryPort(context, port, attr);
            return PortAttributes.decode(attr);
        }
    }

    /** The 16 raw bytes of GID {@code index} on {@code port}. */
    public byte[] queryGid(int port, int index) {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment gid = arena.allocate(Verbs.ibv_gid);
            verbs.queryGid(context, port, index, gid);
            return gid.asSlice(Verbs.ibv_gid$raw$OFFSET, QpInfo.GID_LENGTH).toArray(java.lang.foreign.ValueLayout.JAVA_BYTE);
        }
    }

    public ProtectionDomain allocateProtectionDomain() {
        return new ProtectionDomain(this, verbs.allocPd(context));
    }

    /** A CQ for polling ({@code channel} null) or for events on a completion channel. */
    public IbvCompletionQueue createCompletionQueue(int entries, CompletionChannel channel) {
        MemorySegment ch = channel == null ? MemorySegment.NULL : channel.segment();
        return new IbvCompletionQueue(this, verbs.createCq(context, entries, ch, 0));
    }

    public CompletionChannel createCompletionChannel() {
        return new CompletionChannel(verbs, verbs.createCompChannel(context));
    }

    @Override
    public void close() {
        if (owned) {
            verbs.closeDevice(context);
        }
    }
}
