package io.erda.ffm.verbs;

import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.SymbolLookup;
import java.lang.invoke.MethodHandle;
import java.util.Objects;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Control-path downcalls into one shared library, resolved through a pluggable {@link SymbolLookup}
 * (the real library, or a fake whose symbols are upcall stubs). Every handle is linked on first
 * use, so a missing symbol fails only the call that needs it, with an {@link RdmaUnavailableException}.
 * Every call captures errno and turns a failure into a {@link VerbsException} naming the function.
 *
 * <p>Calls use {@code invokeWithArguments}: these are resource set-up calls (microseconds to
 * milliseconds in the kernel), never the data path, which goes through ops-table handles instead.
 */
public final class NativeLibrary {
    private static final Linker LINKER = Linker.nativeLinker();

    private final String name;
    private final SymbolLookup lookup;
    private final ConcurrentHashMap<String, MethodHandle> handles = new ConcurrentHashMap<>();

    /**
     * @param name   what to call the library in messages, e.g. "libibverbs.so.1"
     * @param lookup where symbols come from
     */
    public NativeLibrary(String name, SymbolLookup lookup) {
        this.name = Objects.requireNonNull(name);
        this.lookup = Objects.requireNonNull(lookup);
    }

    /** Opens a system library for the life of the JVM; absent library → RdmaUnavailableException. */
    public static SymbolLookup openSystemLibrary(String soname, String debianPackage) {
        try {
            return SymbolLookup.libraryLookup(soname, Arena.global());
        } catch (IllegalArgumentException e) {
            throw new RdmaUnavailableException("RDMA library " + soname + " not found (install " + debianPackage
                    + "): " + e.getMessage());
        }
    }

    public String name() {
        return name;
    }

    public SymbolLookup lookup() {
        return lookup;
    }

    /** Whether the lookup has the symbol at all (for features that came with later rdma-core). */
    public boolean has(String symbol) {
        return lookup.find(symbol).isPresent();
    }

    private MethodHandle handle(String symbol, FunctionDescriptor descriptor) {
        return handles.computeIfAbsent(symbol, s -> {
            MemorySegment address = lookup.find(s).orElseThrow(() -> new RdmaUnavailableException(
                    "symbol " + s + " not found in " + name));
            return LINKER.downcallHandle(address, descriptor, Errno.CAPTURE);
        });
    }

    private record Outcome(Object value, int errno) {}

    /** Unbound handles (function pointer first, then the errno capture state) per prototype, for {@link #callAt}. */
    private static final ConcurrentHashMap<FunctionDescriptor, MethodHandle> UNBOUND = new ConcurrentHashMap<>();

    private Outcome invoke(String symbol, FunctionDescriptor descriptor, Object... args) {
        return invoke(symbol, handle(symbol, descriptor), null, args);
    }

    /** {@code function} null: a bound symbol handle; else an unbound handle called through that pointer. */
    private static Outcome invoke(String what, MethodHandle handle, MemorySegment function, Object... args) {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment state = arena.allocate(Errno.CAPTURE_LAYOUT);
            int lead = function == null ? 1 : 2;
            Object[] all = new Object[args.length + lead];
            if (function != null) {
                all[0] = function;
            }
            all[lead - 1] = state;
            System.arraycopy(args, 0, all, lead, args.length);
            Object value = handle.invokeWithArguments(all);
            return new Outcome(value, Errno.read(state));
        } catch (RuntimeException | Error e) {
            throw e;
        } catch (Throwable t) {
            throw new IllegalStateException("downcall " + what + " threw", t);
        }
    }

    /**
     * Calls a function pointer read from a provider table (e.g. {@code verbs_context.create_qp_ex}, what a static
     * inline of verbs.h would call) with errno captured, a control-path call like the symbol ones.
     *
     * @param what the C name for messages, e.g. "ibv_create_qp_ex"
     */
    public PointerResult callPointerAt(String what, MemorySegment function, FunctionDescriptor descriptor, Object... args) {
        MethodHandle handle = UNBOUND.computeIfAbsent(descriptor, d -> LINKER.downcallHandle(d, Errno.CAPTURE));
        Outcome outcome = invoke(what, handle, function, args);
        return new PointerResult((MemorySegment) outcome.value(), outcome.errno());
    }

    /** {@link #callStatus} through a function pointer of a provider table (e.g. {@code verbs_context.query_device_ex}). */
    public void callStatusAt(String what, MemorySegment function, FunctionDescriptor descriptor, Object... args) {
        MethodHandle handle = UNBOUND.computeIfAbsent(descriptor, d -> LINKER.downcallHandle(d, Errno.CAPTURE));
        Outcome outcome = invoke(what, handle, function, args);
        int rc = (int) outcome.value();
        if (rc != 0) {
            throw new VerbsException(what, rc, rc > 0 ? rc : outcome.errno());
        }
    }

    /** For functions returning a pointer, NULL meaning failure with errno set. */
    public MemorySegment callPointer(String symbol, FunctionDescriptor descriptor, Object... args) {
        Outcome outcome = invoke(symbol, descriptor, args);
        MemorySegment result = (MemorySegment) outcome.value();
        if (result.equals(MemorySegment.NULL)) {
            throw VerbsException.nullReturn(symbol, outcome.errno());
        }
        return result;
    }

    /**
     * For functions returning 0 on success and otherwise either an errno value or -1 with errno set
     * (verbs uses both conventions).
     */
    public void callStatus(String symbol, FunctionDescriptor descriptor, Object... args) {
        Outcome outcome = invoke(symbol, descriptor, args);
        int rc = (int) outcome.value();
        if (rc != 0) {
            throw new VerbsException(symbol, rc, rc > 0 ? rc : outcome.errno());
        }
    }

    /** A call whose result the caller interprets itself; errno is discarded. */
    public Object callRaw(String symbol, FunctionDescriptor descriptor, Object... args) {
        return invoke(symbol, descriptor, args).value();
    }

    /** A pointer result that may legitimately be NULL, with the errno that explains a NULL. */
    public record PointerResult(MemorySegment pointer, int errno) {}

    public PointerResult callNullable(String symbol, FunctionDescriptor descriptor, Object... args) {
        Outcome outcome = invoke(symbol, descriptor, args);
        return new PointerResult((MemorySegment) outcome.value(), outcome.errno());
    }
}
