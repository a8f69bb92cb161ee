package io.erda.ffm.libc;

import io.erda.ffm.verbs.Errno;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.function.IntFunction;
import java.util.function.Supplier;

/** One libc call of this package: its errno captured right after it, a refusal thrown naming call and errno. */
final class LibcCall {
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
