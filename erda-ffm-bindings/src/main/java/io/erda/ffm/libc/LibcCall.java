package io.erda.ffm.libc;

import io.erda.ffm.verbs.Errno;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.MethodHandle;
import java.util.function.IntFunction;
import java.util.function.Supplier;

/** One libc call of this package: its errno captured right after it, a refusal thrown naming call and errno. */
final class LibcCall {
    /** {@code open(2)}'s flag: the descriptor does not survive an exec. */
    static final int O_CLOEXEC = 0x80000;
    /** {@code int open(const char *path, int flags, ...)}, errno captured (its first argument). */
    static final MethodHandle OPEN = Linker.nativeLinker().downcallHandle(
            Linker.nativeLinker().defaultLookup().findOrThrow("open"),
            FunctionDescriptor.of(ValueLayout.JAVA_INT, ValueLayout.ADDRESS, ValueLayout.JAVA_INT),
            Linker.Option.firstVariadicArg(2), Errno.CAPTURE);
    /** {@code int close(int fd)}. */
    static final MethodHandle CLOSE = Linker.nativeLinker().downcallHandle(
            Linker.nativeLinker().defaultLookup().findOrThrow("close"),
            FunctionDescriptor.of(ValueLayout.JAVA_INT, ValueLayout.JAVA_INT));

    /** The downcall, given the errno capture segment; returns libc's result (0: done). */
    @FunctionalInterface
    interface Downcall {
        int invoke(MemorySegment errnoCapture) throws Throwable;
    }

    private LibcCall() {}

    /**
     * Runs {@code downcall}; on a non-zero result throws an {@link UncheckedIOException} "CALL failed: ENAME
     * (strerror)" followed by {@code hint} of the errno ("" for none). {@code name}: the function, for a failed
     * downcall itself; {@code call}: the call with its arguments, built only on a refusal.
     */
    static void run(String name, Supplier<String> call, Downcall downcall, IntFunction<String> hint) {
        int result;
        int errno;
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment state = arena.allocate(Errno.CAPTURE_LAYOUT);
            result = downcall.invoke(state);
            errno = Errno.read(state);
        } catch (Throwable t) {
            throw new IllegalStateException(name + " downcall failed", t);
        }
        if (result != 0) {
            throw refused(call.get(), errno, hint.apply(errno));
        }
    }

    /** The refusal of {@code call}: "CALL failed: ENAME (strerror)" followed by {@code hint} ("" for none). */
    static UncheckedIOException refused(String call, int errno, String hint) {
        return new UncheckedIOException(new IOException(call + " failed: " + Errno.name(errno) + " ("
                + Errno.strerror(errno) + ")" + hint));
    }
}
