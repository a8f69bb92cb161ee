package io.erda.ffm.verbs.fake;

import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_INT;

import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemorySegment;
import java.lang.invoke.MethodHandle;
import java.lang.invoke.MethodHandles;

/**
 * What the fakes share to stand in for native code: an upcall stub bound to a handler method of a
 * fake object, and a way to set the C {@code errno} a caller captures after the call.
 */
final class UpcallStubs {
    private UpcallStubs() {}

    private static final Linker LINKER = Linker.nativeLinker();
    private static final MethodHandle ERRNO_LOCATION = LINKER.downcallHandle(
            LINKER.defaultLookup().findOrThrow("__errno_location"), FunctionDescriptor.of(ADDRESS));

    /** A function pointer that calls {@code handler.method}, whose Java signature must match {@code descriptor}. */
    static MemorySegment stub(MethodHandles.Lookup lookup, Object handler, String method, FunctionDescriptor descriptor,
                              Arena arena) {
        try {
            MethodHandle target = lookup.findVirtual(handler.getClass(), method, descriptor.toMethodType()).bindTo(handler);
            return LINKER.upcallStub(target, descriptor, arena);
        } catch (ReflectiveOperationException e) {
            throw new IllegalStateException("fake handler " + method + " does not match " + descriptor, e);
        }
    }

    static void setErrno(int errno) {
        try {
            ((MemorySegment) ERRNO_LOCATION.invokeExact()).reinterpret(JAVA_INT.byteSize()).set(JAVA_INT, 0, errno);
        } catch (Throwable t) {
            throw new IllegalStateException(t);
        }
    }
}
