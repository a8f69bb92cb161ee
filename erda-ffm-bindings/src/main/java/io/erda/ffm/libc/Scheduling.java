package io.erda.ffm.libc;

import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_INT;

import io.erda.ffm.verbs.Errno;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemorySegment;
import java.lang.invoke.MethodHandle;

/** {@code sched_setscheduler(2)} for the calling thread (Linux). */
public final class Scheduling {
    /** First in, first out real-time class: runs before every thread of the normal class. */
    public static final int SCHED_FIFO = 1;
    /** errno of a caller without the privilege (root or CAP_SYS_NICE). */
    public static final int EPERM = 1;

    private static final MethodHandle SCHED_SETSCHEDULER = Linker.nativeLinker().downcallHandle(
            Linker.nativeLinker().defaultLookup().findOrThrow("sched_setscheduler"),
            FunctionDescriptor.of(JAVA_INT, JAVA_INT, JAVA_INT, ADDRESS), Errno.CAPTURE);

    private Scheduling() {}

    /**
     * Puts the calling thread (pid 0 to the kernel) into {@link #SCHED_FIFO} at {@code priority} (1 to 99).
     *
     * @throws UncheckedIOException if the kernel refuses, naming priority and errno ({@link #EPERM} without the
     *                              privilege)
     */
    public static void fifo(int priority) {
        int result;
        int errno;
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment state = arena.allocate(Errno.CAPTURE_LAYOUT);
            MemorySegment param = arena.allocate(JAVA_INT); // struct sched_param { int sched_priority; }
            param.set(JAVA_INT, 0, priority);
            result = (int) SCHED_SETSCHEDULER.invokeExact(state, 0, SCHED_FIFO, param);
            errno = Errno.read(state);
        } catch (Throwable t) {
            throw new IllegalStateException("sched_setscheduler downcall failed", t);
        }
        if (result != 0) {
            throw new UncheckedIOException(new IOException("sched_setscheduler(0, SCHED_FIFO, " + priority + ") failed: "
                    + Errno.name(errno) + " (" + Errno.strerror(errno) + ")"
                    + (errno == EPERM ? "; it needs root or CAP_SYS_NICE" : "")));
        }
    }
}
