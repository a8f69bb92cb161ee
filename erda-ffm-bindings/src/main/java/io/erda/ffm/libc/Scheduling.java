package io.erda.ffm.libc;

import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_BYTE;
import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;

import io.erda.ffm.verbs.Errno;
import java.io.UncheckedIOException;
import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemorySegment;
import java.lang.invoke.MethodHandle;

/**
 * {@code sched_setscheduler(2)}, {@code setpriority(2)} and {@code sched_setaffinity(2)} / {@code sched_getaffinity(2)}
 * for the calling thread (Linux: pid 0 is the calling thread, and the nice value is a thread's own).
 */
public final class Scheduling {
    /** First in, first out real-time class: runs before every thread of the normal class. */
    public static final int SCHED_FIFO = 1;

    private static final MethodHandle SCHED_SETSCHEDULER = Linker.nativeLinker().downcallHandle(
            Linker.nativeLinker().defaultLookup().findOrThrow("sched_setscheduler"),
            FunctionDescriptor.of(JAVA_INT, JAVA_INT, JAVA_INT, ADDRESS), Errno.CAPTURE);

    /** Bytes of the kernel's CPU mask we pass: glibc's {@code cpu_set_t}, 1024 CPUs. */
    private static final int CPU_SET_BYTES = 128;

    private static final MethodHandle SCHED_SETAFFINITY = Linker.nativeLinker().downcallHandle(
            Linker.nativeLinker().defaultLookup().findOrThrow("sched_setaffinity"),
            FunctionDescriptor.of(JAVA_INT, JAVA_INT, JAVA_LONG, ADDRESS), Errno.CAPTURE);
    private static final MethodHandle SCHED_GETAFFINITY = Linker.nativeLinker().downcallHandle(
            Linker.nativeLinker().defaultLookup().findOrThrow("sched_getaffinity"),
            FunctionDescriptor.of(JAVA_INT, JAVA_INT, JAVA_LONG, ADDRESS), Errno.CAPTURE);

    /** {@code setpriority}'s "which" for one process, on Linux one thread. */
    private static final int PRIO_PROCESS = 0;
    private static final MethodHandle SETPRIORITY = Linker.nativeLinker().downcallHandle(
            Linker.nativeLinker().defaultLookup().findOrThrow("setpriority"),
            FunctionDescriptor.of(JAVA_INT, JAVA_INT, JAVA_INT, JAVA_INT), Errno.CAPTURE);

    private Scheduling() {}

    /**
     * Sets the calling thread's nice value ({@code setpriority(PRIO_PROCESS, 0, nice)}; Linux keeps it per thread), -20
     * to 19. A thread above 0 gets a smaller share of a contended CPU, and a thread of nice 0 that wakes preempts it.
     * Raising it needs no privilege; lowering it does (CAP_SYS_NICE, or RLIMIT_NICE).
     *
     * @throws UncheckedIOException if the kernel refuses, naming the value and errno
     */
    public static void nice(int nice) {
        LibcCall.run("setpriority", () -> "setpriority(PRIO_PROCESS, 0, " + nice + ")",
                state -> (int) SETPRIORITY.invokeExact(state, PRIO_PROCESS, 0, nice),
                errno -> errno == Errno.EACCES ? "; a lower nice value needs CAP_SYS_NICE" : "");
    }

    /**
     * The CPUs the calling thread may run on ({@code sched_getaffinity}), ascending.
     *
     * @throws UncheckedIOException if the kernel refuses, naming the errno
     */
    public static int[] allowedCpus() {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment mask = arena.allocate(CPU_SET_BYTES);
            affinity(SCHED_GETAFFINITY, "sched_getaffinity", mask, "mask");
            return java.util.stream.IntStream.range(0, CPU_SET_BYTES * 8)
                    .filter(cpu -> (mask.get(JAVA_BYTE, cpu / 8) & (1 << (cpu % 8))) != 0).toArray();
        }
    }

    /**
     * Pins the calling thread to {@code cpu} ({@code sched_setaffinity} with that one CPU).
     *
     * @throws UncheckedIOException if the kernel refuses (EINVAL: not a CPU this thread may use), naming CPU and errno
     */
    public static void pin(int cpu) {
        if (cpu < 0 || cpu >= CPU_SET_BYTES * 8) {
            throw new IllegalArgumentException("cpu " + cpu + " is outside 0 to " + (CPU_SET_BYTES * 8 - 1));
        }
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment mask = arena.allocate(CPU_SET_BYTES);
            mask.set(JAVA_BYTE, cpu / 8, (byte) (1 << (cpu % 8)));
            affinity(SCHED_SETAFFINITY, "sched_setaffinity", mask, "cpu " + cpu);
        }
    }

    /** {@code call} (set or get affinity) of the calling thread with {@code mask}; {@code what}: the mask, for errors. */
    private static void affinity(MethodHandle call, String name, MemorySegment mask, String what) {
        LibcCall.run(name, () -> name + "(0, " + CPU_SET_BYTES + ", " + what + ")",
                state -> (int) call.invokeExact(state, 0, (long) CPU_SET_BYTES, mask), errno -> "");
    }

    /**
     * Puts the calling thread (pid 0 to the kernel) into {@link #SCHED_FIFO} at {@code priority} (1 to 99).
     *
     * @throws UncheckedIOException if the kernel refuses, naming priority and errno ({@link Errno#EPERM} without
     *                              the privilege)
     */
    public static void fifo(int priority) {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment param = arena.allocate(JAVA_INT); // struct sched_param { int sched_priority; }
            param.set(JAVA_INT, 0, priority);
            LibcCall.run("sched_setscheduler", () -> "sched_setscheduler(0, SCHED_FIFO, " + priority + ")",
                    state -> (int) SCHED_SETSCHEDULER.invokeExact(state, 0, SCHED_FIFO, param),
                    errno -> errno == Errno.EPERM ? "; it needs root or CAP_SYS_NICE" : "");
        }
    }
}
