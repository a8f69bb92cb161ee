package io.erda.ffm.verbs;

import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_INT;

import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.StructLayout;
import java.lang.invoke.MethodHandle;
import java.lang.invoke.VarHandle;
import java.util.Map;

/**
 * errno as captured by {@link Linker.Option#captureCallState(String...)}, and its text. errno is
 * read from the capture segment right after the downcall, never from a later libc call that could
 * have overwritten it.
 */
public final class Errno {
    private Errno() {}

    public static final Linker.Option CAPTURE = Linker.Option.captureCallState("errno");
    public static final StructLayout CAPTURE_LAYOUT = Linker.Option.captureStateLayout();
    private static final VarHandle ERRNO =
            CAPTURE_LAYOUT.varHandle(java.lang.foreign.MemoryLayout.PathElement.groupElement("errno"));

    public static final int EPERM = 1;
    public static final int ENOENT = 2;
    public static final int EINTR = 4;
    public static final int EIO = 5;
    public static final int EAGAIN = 11;
    public static final int ENOMEM = 12;
    public static final int EACCES = 13;
    public static final int EFAULT = 14;
    public static final int EBUSY = 16;
    public static final int ENODEV = 19;
    public static final int EINVAL = 22;
    public static final int ENOSYS = 38;
    public static final int EOPNOTSUPP = 95;
    public static final int EADDRINUSE = 98;
    public static final int EADDRNOTAVAIL = 99;
    public static final int ENETUNREACH = 101;
    public static final int ECONNRESET = 104;
    public static final int ETIMEDOUT = 110;
    public static final int ECONNREFUSED = 111;

    private static final Map<Integer, String> NAMES = Map.ofEntries(
            Map.entry(EPERM, "EPERM"), Map.entry(ENOENT, "ENOENT"), Map.entry(EINTR, "EINTR"),
            Map.entry(EIO, "EIO"), Map.entry(EAGAIN, "EAGAIN"), Map.entry(ENOMEM, "ENOMEM"),
            Map.entry(EACCES, "EACCES"), Map.entry(EFAULT, "EFAULT"), Map.entry(EBUSY, "EBUSY"),
            Map.entry(ENODEV, "ENODEV"), Map.entry(EINVAL, "EINVAL"), Map.entry(ENOSYS, "ENOSYS"),
            Map.entry(EOPNOTSUPP, "EOPNOTSUPP"), Map.entry(EADDRINUSE, "EADDRINUSE"), Map.entry(EADDRNOTAVAIL, "EADDRNOTAVAIL"),
            Map.entry(ENETUNREACH, "ENETUNREACH"), Map.entry(ECONNRESET, "ECONNRESET"),
            Map.entry(ETIMEDOUT, "ETIMEDOUT"), Map.entry(ECONNREFUSED, "ECONNREFUSED"));

    /** Lazily linked so that loading Errno never touches libc. */
    private static final class StrError {
        static final MethodHandle STRERROR = Linker.nativeLinker().downcallHandle(
                Linker.nativeLinker().defaultLookup().findOrThrow("strerror"),
                FunctionDescriptor.of(ADDRESS, JAVA_INT));
    }

    /** errno from a capture segment of {@link #CAPTURE_LAYOUT}. */
    public static int read(MemorySegment captureState) {
        return (int) ERRNO.get(captureState, 0L);
    }

    /** "ENOSYS" for 38; "errno 4242" for values without a symbolic name here. */
    public static String name(int errno) {
        return NAMES.getOrDefault(errno, "errno " + errno);
    }

    /** libc's text for errno (strerror; called on the control path only). */
    public static String strerror(int errno) {
        try {
            MemorySegment text = (MemorySegment) StrError.STRERROR.invokeExact(errno);
            return text.reinterpret(4096).getString(0);
        } catch (Throwable t) {
            return "errno " + errno;
        }
    }

    /** "Function not implemented (ENOSYS)". */
    public static String describe(int errno) {
        return strerror(errno) + " (" + name(errno) + ")";
    }
}
