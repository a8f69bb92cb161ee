package io.erda.ffm.libc;

import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;

import io.erda.ffm.verbs.Errno;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemorySegment;
import java.lang.invoke.MethodHandle;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * A shared mapping of a device-DAX character device ({@code /dev/daxN.M}, Linux): persistent memory without a file
 * system, mapped with {@code open(2)} and {@code mmap(2)} because the JDK's {@code FileChannel.map} cannot map a
 * character device (it sizes the mapping by the file's length, which is 0 for a device, and tries to extend it).
 *
 * <p>The device's alignment and size come from its sysfs directory ({@code /sys/dev/char/MAJOR:MINOR}, whose
 * {@code subsystem} is {@code dax}): the kernel refuses a mapping whose length is not a multiple of the alignment
 * (2 MiB or 1 GiB on a namespace made so), and this class refuses it first, naming both. The mapping asks for
 * {@code MAP_SYNC} (with {@code MAP_SHARED_VALIDATE}), which device-DAX grants: its pages are the media's, with no
 * page cache and no file-system metadata to sync, so {@link #syncMapped()} is true on every kernel that has device-DAX.
 *
 * <p>Making stores durable is the caller's business and is a cache-line write-back ({@code CLWB}, {@code CLFLUSHOPT}
 * or {@code CLFLUSH}, then a fence) of the range. {@code msync(2)} does not do it here: device-DAX has no
 * {@code fsync}, so {@code msync(MS_SYNC)} fails with EINVAL. The JDK's cache-line write-back,
 * {@code MemorySegment.force} of a MAP_SYNC mapping, applies only to segments {@code FileChannel.map} made, not to this
 * one (whose {@code force} throws {@code UnsupportedOperationException}). {@link #close()} unmaps.
 */
public final class DeviceDax implements AutoCloseable {
    private static final int O_RDWR = 2;
    private static final int PROT_READ = 1;
    private static final int PROT_WRITE = 2;
    private static final int MAP_SHARED = 0x01;
    private static final int MAP_SHARED_VALIDATE = 0x03;
    private static final int MAP_SYNC = 0x80000;
    private static final long MAP_FAILED = -1L;
    private static final int S_IFMT = 0170000;
    private static final int S_IFCHR = 0020000;

    private static final Linker LINKER = Linker.nativeLinker();
    private static final MethodHandle MMAP = LINKER.downcallHandle(LINKER.defaultLookup().findOrThrow("mmap"),
            FunctionDescriptor.of(JAVA_LONG, JAVA_LONG, JAVA_LONG, JAVA_INT, JAVA_INT, JAVA_INT, JAVA_LONG),
            Errno.CAPTURE);
    private static final MethodHandle MUNMAP = LINKER.downcallHandle(LINKER.defaultLookup().findOrThrow("munmap"),
            FunctionDescriptor.of(JAVA_INT, JAVA_LONG, JAVA_LONG), Errno.CAPTURE);

    private final Path device;
    private final long alignment;
    private final long address;
    private final long length;
    private final boolean syncMapped;
    private final Arena arena = Arena.ofShared();
    private final MemorySegment segment;

    private DeviceDax(Path device, long alignment, long address, long length, boolean syncMapped) {
        this.device = device;
        this.alignment = alignment;
        this.address = address;
        this.length = length;
        this.syncMapped = syncMapped;
        this.segment = MemorySegment.ofAddress(address).reinterpret(length, arena, null);
    }

    /** What sysfs says of a device-DAX device: its mapping alignment and its size, in bytes. */
    public record Geometry(long alignment, long size) {}

    /**
     * The alignment and size of the device-DAX device {@code device} (e.g. {@code /dev/dax0.0}).
     *
     * @throws IllegalArgumentException if {@code device} is not a character device of the {@code dax} subsystem,
     *                                  naming what it is
     */
    public static Geometry geometry(Path device) {
        int mode;
        long rdev;
        try {
            mode = (Integer) Files.getAttribute(device, "unix:mode");
            rdev = (Long) Files.getAttribute(device, "unix:rdev");
        } catch (IOException e) {
            throw new UncheckedIOException("cannot stat device-DAX device " + device, e);
        }
        if ((mode & S_IFMT) != S_IFCHR) {
            throw new IllegalArgumentException(device + " is not a character device (file type 0"
                    + Integer.toOctalString(mode & S_IFMT) + "): a device-DAX device is one, /dev/daxN.M");
        }
        long major = ((rdev >>> 8) & 0xfff) | ((rdev >>> 32) & ~0xfffL);
        long minor = (rdev & 0xff) | ((rdev >>> 12) & ~0xffL);
        Path sysfs = Path.of("/sys/dev/char/" + major + ":" + minor);
        String subsystem;
        try {
            subsystem = Files.readSymbolicLink(sysfs.resolve("subsystem")).getFileName().toString();
        } catch (IOException e) {
            throw new IllegalArgumentException(device + " (character device " + major + ":" + minor + ") has no "
                    + sysfs.resolve("subsystem") + ": " + e.getMessage(), e);
        }
        if (!subsystem.equals("dax")) {
            throw new IllegalArgumentException(device + " (character device " + major + ":" + minor + ") is of "
                    + "subsystem " + subsystem + ", not dax: it is not a device-DAX device");
        }
        return new Geometry(readLong(sysfs.resolve("align")), readLong(sysfs.resolve("size")));
    }

    /**
     * Maps {@code [0, length)} of the device-DAX device {@code device} shared, with MAP_SYNC where the kernel grants
     * it (device-DAX does), for reading and writing.
     *
     * @throws IllegalArgumentException if {@code device} is no device-DAX device ({@link #geometry}), or
     *                                  {@code length} is not a positive multiple of its alignment no larger than its
     *                                  size, naming the value and the limit
     * @throws UncheckedIOException     if {@code open} or {@code mmap} is refused, naming the call and errno
     */
    public static DeviceDax map(Path device, long length) {
        Geometry geometry = geometry(device);
        checkLength(device, length, geometry);
        try (Arena call = Arena.ofConfined()) {
            MemorySegment errno = call.allocate(Errno.CAPTURE_LAYOUT);
            int fd = (int) LibcCall.OPEN.invokeExact(errno, call.allocateFrom(device.toString()),
                    O_RDWR | LibcCall.O_CLOEXEC);
            if (fd < 0) {
                throw LibcCall.refused("open(" + device + ", O_RDWR)", Errno.read(errno), "");
            }
            try {
                boolean sync = true;
                long address = (long) MMAP.invokeExact(errno, 0L, length, PROT_READ | PROT_WRITE,
                        MAP_SHARED_VALIDATE | MAP_SYNC, fd, 0L);
                if (address == MAP_FAILED && Errno.read(errno) == Errno.EOPNOTSUPP) {
                    sync = false; // a kernel whose device-DAX does not validate MAP_SYNC: a plain shared mapping
                    address = (long) MMAP.invokeExact(errno, 0L, length, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0L);
                }
                if (address == MAP_FAILED) {
                    throw LibcCall.refused("mmap(" + device + ", " + length + " bytes, MAP_SHARED"
                            + (sync ? "_VALIDATE|MAP_SYNC" : "") + ")", Errno.read(errno), "");
                }
                return new DeviceDax(device, geometry.alignment(), address, length, sync);
            } finally {
                int unused = (int) LibcCall.CLOSE.invokeExact(fd); // the mapping keeps the device open
            }
        } catch (RuntimeException | Error e) {
            throw e;
        } catch (Throwable t) {
            throw new IllegalStateException("device-DAX mapping downcall failed", t);
        }
    }

    /**
     * Refuses a {@code length} the kernel would: not positive, not a multiple of the device's alignment, or beyond its
     * size; the message names the device, the value and the limit.
     */
    static void checkLength(Path device, long length, Geometry geometry) {
        if (length <= 0) {
            throw new IllegalArgumentException("mapping length " + length + " of " + device + " is not positive");
        }
        if (geometry.alignment() <= 0 || length % geometry.alignment() != 0) {
            throw new IllegalArgumentException("mapping length " + length + " of " + device
                    + " is not a multiple of its alignment " + geometry.alignment());
        }
        if (length > geometry.size()) {
            throw new IllegalArgumentException("mapping length " + length + " of " + device + " exceeds its size "
                    + geometry.size());
        }
    }

    private static long readLong(Path file) {
        try {
            return Long.parseLong(Files.readString(file, StandardCharsets.US_ASCII).trim());
        } catch (IOException | NumberFormatException e) {
            throw new IllegalArgumentException("cannot read " + file + ": " + e.getMessage(), e);
        }
    }

    /** The mapping: {@link #length()} bytes, valid until {@link #close()}. */
    public MemorySegment segment() {
        return segment;
    }

    public Path device() {
        return device;
    }

    /** The device's mapping alignment (sysfs {@code align}). */
    public long alignment() {
        return alignment;
    }

    public long length() {
        return length;
    }

    /** Whether the kernel granted MAP_SYNC. */
    public boolean syncMapped() {
        return syncMapped;
    }

    /** Invalidates {@link #segment()} (waiting for no thread to be accessing it), then unmaps it. */
    @Override
    public void close() {
        arena.close();
        try (Arena call = Arena.ofConfined()) {
            MemorySegment errno = call.allocate(Errno.CAPTURE_LAYOUT);
            int result = (int) MUNMAP.invokeExact(errno, address, length);
            if (result != 0) {
                throw LibcCall.refused("munmap(0x" + Long.toHexString(address) + ", " + length + ") of " + device,
                        Errno.read(errno), "");
            }
        } catch (RuntimeException | Error e) {
            throw e;
        } catch (Throwable t) {
            throw new IllegalStateException("munmap downcall failed", t);
        }
    }

    @Override
    public String toString() {
        return "DeviceDax[" + device + ", " + length + " bytes, alignment " + alignment
                + (syncMapped ? ", MAP_SYNC" : "") + "]";
    }
}
