package io.erda.softrnic;

import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;

import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemorySegment;
import java.lang.invoke.MethodHandle;

/**
 * A Linux eventfd in semaphore mode: the file descriptor of a fake {@code rdma_event_channel}, readable while events
 * are queued, so that the caller can poll(2) it as it polls the real channel's fd. Each {@link #signal} adds one,
 * each {@link #await} blocks until it can take one away.
 */
final class EventFd implements AutoCloseable {
    private static final Linker LINKER = Linker.nativeLinker();
    private static final MethodHandle EVENTFD = libc("eventfd", FunctionDescriptor.of(JAVA_INT, JAVA_INT, JAVA_INT));
    private static final MethodHandle READ = libc("read", FunctionDescriptor.of(JAVA_LONG, JAVA_INT, ADDRESS, JAVA_LONG));
    private static final MethodHandle WRITE = libc("write", FunctionDescriptor.of(JAVA_LONG, JAVA_INT, ADDRESS, JAVA_LONG));
    private static final MethodHandle CLOSE = libc("close", FunctionDescriptor.of(JAVA_INT, JAVA_INT));
    private static final int EFD_SEMAPHORE = 1;
    private static final int EFD_CLOEXEC = 0x80000;

    private final int fd;

    EventFd() {
        try {
            fd = (int) EVENTFD.invokeExact(0, EFD_SEMAPHORE | EFD_CLOEXEC);
        } catch (Throwable t) {
            throw new IllegalStateException("eventfd threw", t);
        }
        if (fd < 0) {
            throw new IllegalStateException("eventfd failed: " + fd);
        }
    }

    private static MethodHandle libc(String name, FunctionDescriptor descriptor) {
        return LINKER.downcallHandle(LINKER.defaultLookup().findOrThrow(name), descriptor);
    }

    int fd() {
        return fd;
    }

    void signal() {
        transfer(WRITE);
    }

    /** Blocks (in read(2)) until a signal is available and consumes it. */
    void await() {
        transfer(READ);
    }

    private void transfer(MethodHandle call) {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment one = arena.allocate(JAVA_LONG);
            one.set(JAVA_LONG, 0, 1L);
            long n = (long) call.invokeExact(fd, one, 8L);
            if (n != 8) {
                throw new IllegalStateException("eventfd " + fd + " transferred " + n + " bytes, expected 8");
            }
        } catch (RuntimeException | Error e) {
            throw e;
        } catch (Throwable t) {
            throw new IllegalStateException(t);
        }
    }

    @Override
    public void close() {
        try {
            int rc = (int) CLOSE.invokeExact(fd);
            assert rc == 0;
        } catch (Throwable t) {
            throw new IllegalStateException(t);
        }
    }
}
