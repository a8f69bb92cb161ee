package io.erda.core.pm;

import io.erda.protocol.memory.Words;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.concurrent.atomic.LongAdder;
import jdk.nio.mapmode.ExtendedMapMode;

/**
 * One PM file mapped into memory: a {@link PmFileHeader} page followed by the data area.
 *
 * <p>On a DAX file system the mapping uses MAP_SYNC ({@link ExtendedMapMode#READ_WRITE_SYNC}) so
 * {@link #persist} is a cache-line write-back; elsewhere (tmpfs, disk) MAP_SYNC is refused by the
 * kernel and the region falls back to a plain shared mapping where {@code persist} is msync. On a file system whose
 * files are memory only (tmpfs, ramfs, hugetlbfs: {@link #writeBack}) msync writes nothing back, so persist there is
 * a full fence: the ordering the syscall gave, without the syscall (0.4 µs each here, three or four per PUT between
 * server and client). What power-failure emulation makes durable is copied into the image as before.
 *
 * <p><b>Byte accounting.</b> The region counts the bytes the server itself stores through this API
 * ({@link #localBytesWritten()}). One-sided writes done by the fabric never pass through here; the
 * fabric counts those and the server adds them: NVM bytes = local + remote. Code that stores through
 * a flyweight over {@link #data()} must call {@link #recordWrite} for the range it wrote, which also
 * charges the optional {@link WriteLatencyModel}.
 *
 * <p><b>Power-failure emulation</b> ({@link PowerFailure}). In a directory holding the {@link PowerFailure#MARKER}
 * file every region keeps a durable image {@code NAME.durable}: what {@link #create}, {@link #persist},
 * {@link #setMutableWord} and {@link #zeroForReuse} make durable is copied into it in whole 64-byte lines (a
 * cache-line write-back); stores not yet persisted are only in the file itself, which the offline collapse may then
 * drop or tear. {@link #durableImage()} is what fabric providers mirror one-sided writes into where those are durable
 * on placement.
 *
 * <p>Thread-safety: accessors and counters are thread-safe; what is written where is the caller's
 * business.
 */
public final class PmRegion implements AutoCloseable {
    private final Path path;
    private final Arena arena;
    private final MemorySegment mapping;
    private final MemorySegment data;
    private final boolean syncMapped;
    /** Whether persisting has anything to write back: MAP_SYNC, or a file system with a device behind it. */
    private final boolean writeBack;
    private final WriteLatencyModel latency;
    private final LongAdder localBytes = new LongAdder();
    /** The durable image under power-failure emulation, else null; set before the region is handed out. */
    private DurableImage durable;

    private PmRegion(Path path, Arena arena, MemorySegment mapping, boolean syncMapped, boolean writeBack,
                     WriteLatencyModel latency) {
        this.path = path;
        this.arena = arena;
        this.mapping = mapping;
        this.data = mapping.asSlice(PmFileHeader.LENGTH);
        this.syncMapped = syncMapped;
        this.writeBack = writeBack;
        this.latency = latency;
    }

    /** File system types whose files live in memory only: msync has nothing to write back. */
    private static final java.util.Set<String> MEMORY_ONLY = java.util.Set.of("tmpfs", "ramfs", "hugetlbfs");

    /**
     * Whether persisting a mapping of {@code file} has to write anything back: true under MAP_SYNC ({@code sync}:
     * the cache lines) and on a file system with a device behind it (msync), false on one whose files are memory
     * only. Unknown (the type cannot be read): true, msync as ever.
     */
    static boolean writeBack(Path file, boolean sync) {
        if (sync) {
            return true;
        }
        try {
            return !MEMORY_ONLY.contains(Files.getFileStore(file).type());
        } catch (IOException e) {
            return true;
        }
    }

    /** Makes {@code [offset, offset+length)} of the mapping durable: write-back, or a fence where there is none. */
    private void writeBack(long offset, long length) {
        if (writeBack) {
            mapping.asSlice(offset, length).force();
        } else {
            java.lang.invoke.VarHandle.fullFence();
        }
    }

    /**
     * Creates a new PM file (it must not exist) of {@code dataLength} data bytes, zero-filled, with a
     * header of the given kind and geometry, persisted before returning.
     */
    public static PmRegion create(Path path, int kind, long dataLength, long[] geometry, WriteLatencyModel latency) {
        return create(path, kind, dataLength, geometry, latency, MappingAdvice.NONE);
    }

    /** {@link #create(Path, int, long, long[], WriteLatencyModel)} with {@code advice} applied to the new mapping. */
    public static PmRegion create(Path path, int kind, long dataLength, long[] geometry, WriteLatencyModel latency,
                                  MappingAdvice advice) {
        if (dataLength <= 0 || dataLength % 8 != 0) {
            throw new IllegalArgumentException("data length " + dataLength + " is not a positive multiple of 8");
        }
        long fileLength = PmFileHeader.LENGTH + dataLength;
        // Made whole under a temporary name, then published under the real one with link(2), which fails if that
        // name exists (CREATE_NEW's guarantee, atomically): a crash (or SIGTERM) while a file is being created leaves
        // no file of the real name that is empty or headerless, which recovery and verify would refuse. A leftover
        // temporary file matches no name the store looks for and is replaced by the next attempt.
        Path temporary = temporaryName(path);
        PmRegion region;
        try {
            Files.deleteIfExists(temporary);
            region = map(temporary, path, fileLength, latency, advice, StandardOpenOption.CREATE_NEW);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot create PM file " + path, e);
        } catch (RuntimeException e) {
            deleteQuietly(temporary); // e.g. the advice refused the mapping: no file is left behind
            throw e;
        }
        try {
            PmFileModes.restrictNew(temporary); // before it has its name: never published with a looser mode
            PmFileHeader.write(region.mapping, kind, dataLength, geometry);
            region.localBytes.add(PmFileHeader.LENGTH);
            region.mapping.asSlice(0, PmFileHeader.LENGTH).force();
            Files.createLink(path, temporary);
            if (DurableImage.kept(path)) {
                // after the link, which fails if the name exists: an existing file's image is never replaced. A crash
                // before this leaves a file without image, which counts as durable: so far it holds only its header.
                region.durable = DurableImage.create(path, region.mapping, region.arena);
            }
            Files.delete(temporary);
            forceDirectory(path);
            return region;
        } catch (IOException e) {
            region.close();
            deleteQuietly(temporary); // e.g. the real name existed: give the space back now
            throw new UncheckedIOException("cannot create PM file " + path, e);
        }
    }

    private static void deleteQuietly(Path temporary) {
        try {
            Files.deleteIfExists(temporary);
        } catch (IOException ignored) {
            // the next create replaces it
        }
    }

    /** The name a file of {@code path} has while {@link #create} makes it. */
    public static Path temporaryName(Path path) {
        return path.resolveSibling(path.getFileName() + ".creating");
    }

    /**
     * Persists a new name in {@code path}'s directory (fsync of the directory). Not interruptible: a file channel
     * closes on its thread's interrupt, and a server closing its cleaner or preparer mid-rename must not leave a name
     * half made (the interrupt stays set for the caller). Also for other files of a store's directory that must
     * survive a crash under their new name (the cluster's store identity).
     */
    public static void forceDirectory(Path path) throws IOException {
        Path dir = path.toAbsolutePath().getParent();
        uninterruptibly(() -> {
            try (FileChannel channel = FileChannel.open(dir, StandardOpenOption.READ)) {
                channel.force(true);
            }
            return null;
        });
    }

    /** A call that uses a file channel, for {@link #uninterruptibly}. */
    private interface ChannelCall<T, X extends Exception> {
        T call() throws X;
    }

    /**
     * Runs {@code call} with this thread's interrupt cleared and sets it again afterwards if it was set: a file
     * channel closes when a thread with its interrupt set uses it (an interrupt arriving during the call still does).
     */
    private static <T, X extends Exception> T uninterruptibly(ChannelCall<T, X> call) throws X {
        boolean interrupted = Thread.interrupted();
        try {
            return call.call();
        } finally {
            if (interrupted) {
                Thread.currentThread().interrupt();
            }
        }
    }

    /**
     * Maps an existing PM file and checks its header (magic, version, kind, CRC, length); refuses a file another
     * user could write ({@link PmFileModes#checkFile}).
     */
    public static PmRegion open(Path path, int kind, WriteLatencyModel latency) {
        return open(path, kind, latency, MappingAdvice.NONE);
    }

    /** {@link #open(Path, int, WriteLatencyModel)} with {@code advice} applied to the mapping. */
    public static PmRegion open(Path path, int kind, WriteLatencyModel latency, MappingAdvice advice) {
        PmFileModes.checkFile(path);
        long fileLength;
        try {
            fileLength = java.nio.file.Files.size(path);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot stat PM file " + path, e);
        }
        if (fileLength < PmFileHeader.LENGTH) {
            throw new PmFormatException(path + ": file length " + fileLength + " is shorter than the "
                    + PmFileHeader.LENGTH + "-byte header");
        }
        PmRegion region = map(path, path, fileLength, latency, advice);
        try {
            PmFileHeader.check(region.mapping, path.toString(), kind);
            PmFormatException.requireEqual(path, "file data length", fileLength - PmFileHeader.LENGTH,
                    region.mapping.get(Words.LONG_U, PmFileHeader.DATA_LENGTH_OFFSET));
            if (DurableImage.kept(path)) {
                region.durable = DurableImage.open(path, fileLength, region.arena);
            }
            return region;
        } catch (RuntimeException e) {
            region.close();
            throw e;
        }
    }

    /**
     * Maps the file at {@code file}; the region is known by {@code name} (where {@link #create} publishes it). Not
     * interruptible, as {@link #forceDirectory}: a file channel closes when a thread with its interrupt set uses it,
     * and the JVM leaves a thread interrupted now and then when another thread closes a shared arena (a retired
     * region's) while this one reads a segment of it; the PUT that then made a region failed "cannot map" (first
     * the MAP_SYNC attempt, then the plain map on the closed channel). The interrupt stays set for the caller.
     */
    private static PmRegion map(Path file, Path name, long fileLength, WriteLatencyModel latency, MappingAdvice advice,
                                StandardOpenOption... extra) {
        return uninterruptibly(() -> mapChannel(file, name, fileLength, latency, advice, extra));
    }

    private static PmRegion mapChannel(Path file, Path name, long fileLength, WriteLatencyModel latency,
                                       MappingAdvice advice, StandardOpenOption... extra) {
        Arena arena = Arena.ofShared();
        try (FileChannel channel = openChannel(file, extra)) {
            if (extra.length > 0) {
                channel.truncate(0);
                // sparse extension: the file reads as zeros, so a new region never holds stale objects. Its length
                // comes first in any case: tmpfs mounted huge=within_size gives a huge page only below it.
                channel.write(java.nio.ByteBuffer.allocate(1), fileLength - 1);
                if (advice.allocatesNewFiles()) {
                    writeZeros(channel, file, fileLength);
                }
            }
            MemorySegment mapping;
            boolean sync;
            try {
                mapping = channel.map(ExtendedMapMode.READ_WRITE_SYNC, 0, fileLength, arena);
                sync = true;
            } catch (UnsupportedOperationException | IOException notDax) {
                // not a DAX file system: MAP_SYNC is refused, persist falls back to msync
                mapping = channel.map(FileChannel.MapMode.READ_WRITE, 0, fileLength, arena);
                sync = false;
            }
            advice.mapped(name, mapping);
            return new PmRegion(name, arena, mapping, sync, writeBack(file, sync), latency);
        } catch (IOException e) {
            arena.close();
            throw new UncheckedIOException("cannot map PM file " + file, e);
        } catch (RuntimeException e) {
            arena.close();
            throw e;
        }
    }

    /** Bytes of zeros written per call by {@link #writeZeros}: one huge page (x86-64 PMD size). */
    private static final int ZEROS_CHUNK = 2 << 20;

    /** Writes zeros over {@code [0, length)} of a new file through {@code channel} ({@link MappingAdvice#allocatesNewFiles}). */
    private static void writeZeros(FileChannel channel, Path file, long length) {
        try (Arena buffer = Arena.ofConfined()) {
            java.nio.ByteBuffer zeros = buffer.allocate(Math.min(length, ZEROS_CHUNK)).asByteBuffer();
            for (long at = 0; at < length; ) {
                zeros.clear().limit((int) Math.min(zeros.capacity(), length - at));
                at += channel.write(zeros, at);
            }
        } catch (IOException e) {
            throw new UncheckedIOException(new IOException("cannot allocate the " + length + " bytes of new PM file "
                    + file + " (" + freeSpace(file) + "): " + e.getMessage(), e));
        }
    }

    /** What the file system of {@code file} has left, for an error message ("its file system S has F of T bytes free"). */
    public static String freeSpace(Path file) {
        try {
            java.nio.file.FileStore store = Files.getFileStore(file);
            return "its file system " + store + " has " + store.getUsableSpace() + " of " + store.getTotalSpace()
                    + " bytes free";
        } catch (IOException e) {
            return "its file system's free space is unknown: " + e.getMessage();
        }
    }

    private static FileChannel openChannel(Path path, StandardOpenOption... extra) throws IOException {
        if (extra.length == 0) {
            return FileChannel.open(path, StandardOpenOption.READ, StandardOpenOption.WRITE);
        }
        return FileChannel.open(path, java.util.Set.of(StandardOpenOption.READ, StandardOpenOption.WRITE, extra[0]),
                java.nio.file.attribute.PosixFilePermissions.asFileAttribute(
                        java.nio.file.attribute.PosixFilePermissions.fromString("rw-------")));
    }

    /** The file this region maps. */
    public Path path() {
        return path;
    }

    /** The whole mapping, header included (file offset 0). */
    public MemorySegment mapping() {
        return mapping;
    }

    /** The data area, after the header. */
    public MemorySegment data() {
        return data;
    }

    /** File offset at which {@link #data()} starts (page-aligned). */
    public long dataFileOffset() {
        return PmFileHeader.LENGTH;
    }

    public long dataLength() {
        return data.byteSize();
    }

    /** Whether the mapping uses MAP_SYNC (DAX); if not, persist is msync (or a fence on a memory-only file system). */
    public boolean syncMapped() {
        return syncMapped;
    }

    /** Whether {@link #persist} writes anything back (MAP_SYNC, or msync to a device), or is a fence only. */
    public boolean writesBack() {
        return writeBack;
    }

    /** A geometry slot of the header, as written at creation. */
    public long geometry(int slot) {
        return mapping.get(Words.LONG_U, PmFileHeader.geometryOffset(slot));
    }

    /** Throws naming found vs expected when a geometry slot differs from what the opener expects. */
    public void requireGeometry(int slot, String name, long expected) {
        PmFormatException.requireEqual(path, name, geometry(slot), expected);
    }

    /** A mutable header word (acquire load). */
    public long mutableWord(int slot) {
        return Words.getAcquire(mapping, PmFileHeader.mutableOffset(slot));
    }

    /** Stores, counts and persists a mutable header word with one 8-byte release store. */
    public void setMutableWord(int slot, long value) {
        long offset = PmFileHeader.mutableOffset(slot);
        Words.setRelease(mapping, offset, value);
        localBytes.add(8);
        latency.charge(offset, 8);
        writeBack(offset, 8);
        if (durable != null) {
            durable.copyLines(mapping, offset, 8);
        }
    }

    /** One 8-byte release store into the data area, counted (not persisted: call {@link #persist}). */
    public void setLongRelease(long dataOffset, long value) {
        Words.setRelease(data, dataOffset, value);
        recordWrite(dataOffset, 8);
    }

    /** Copies {@code source} into the data area at {@code dataOffset}, counted (not persisted). */
    public void write(long dataOffset, MemorySegment source) {
        MemorySegment.copy(source, 0, data, dataOffset, source.byteSize());
        recordWrite(dataOffset, source.byteSize());
    }

    /** Accounts for {@code length} bytes the caller stored at {@code dataOffset} and charges the latency model. */
    public void recordWrite(long dataOffset, long length) {
        localBytes.add(length);
        latency.charge(PmFileHeader.LENGTH + dataOffset, length);
    }

    /**
     * Makes {@code [dataOffset, dataOffset+length)} durable: cache-line write-back under MAP_SYNC, else msync, or a
     * full fence where the file is memory only (class comment).
     */
    public void persist(long dataOffset, long length) {
        if (length > 0) {
            writeBack(PmFileHeader.LENGTH + dataOffset, length);
            if (durable != null) {
                durable.copyLines(mapping, PmFileHeader.LENGTH + dataOffset, length);
            }
        }
    }

    /**
     * The durable image's data area (same length and layout as {@link #data()}) under power-failure emulation, else
     * null: where a fabric provider copies one-sided writes once they are durable without the server's help.
     */
    public MemorySegment durableImage() {
        return durable == null ? null : durable.mapping().asSlice(PmFileHeader.LENGTH);
    }

    /** The durable image's file (its data at {@link #dataFileOffset()}), or null without the emulation. */
    public Path durableImagePath() {
        return durable == null ? null : durable.path();
    }

    /**
     * The durable image's copy lock word, or null without the emulation: a provider mirroring writes into the image
     * copies under it, as {@link #persist} does (a spin lock: CAS 0 to 1, store 0 to release; a holder that is gone
     * is taken over after a second).
     */
    public MemorySegment durableImageLock() {
        return durable == null ? null : durable.lockWord();
    }

    /** File offset of {@link #durableImageLock()} in {@link #durableImagePath()}. */
    public long durableImageLockOffset() {
        return durable == null ? -1 : durable.lockFileOffset();
    }

    /** Bytes this region's owner stored through this API (one-sided remote writes are counted by the fabric). */
    public long localBytesWritten() {
        return localBytes.sum();
    }

    /**
     * Zeroes the data area and the mutable header words and persists them (docs/ARCHITECTURE.md, [recycled-memory]: a
     * recycled region must not hold an object that could validate at a new reservation).
     */
    public void zeroForReuse() {
        zeroForReuse(data.byteSize());
    }

    /**
     * Like {@link #zeroForReuse()} for a region known to be zero from {@code length} on (a log region
     * above its high-water mark was never handed out): zeroes only {@code [0, length)}, so a sparse
     * file is not filled in.
     */
    public void zeroForReuse(long length) {
        if (length < 0 || length > data.byteSize()) {
            throw new IllegalArgumentException("zero length " + length + " outside [0, " + data.byteSize() + "]");
        }
        MemorySegment used = data.asSlice(0, length);
        if (length > 0) {
            used.fill((byte) 0);
            recordWrite(0, length);
            persist(0, length);
        }
        for (int slot = 0; slot < PmFileHeader.MUTABLE_SLOTS; slot++) {
            setMutableWord(slot, 0);
        }
    }

    /**
     * This region's file under another name in the same directory, mapping and pages carried over (what keeps
     * recycled log memory warm, {@code io.erda.core.log.RegionPool}). With a {@code geometry}, the header is first
     * rewritten for it (same kind and data length; the mutable words zero) and persisted, so the file is whole before
     * it has the new name; null keeps the header. The new name is linked (failing if it exists, as {@link #create}'s
     * does), then the durable image's, then the old names are removed and the directory is fsynced: a crash leaves
     * the file under one name or both, each image with its file or without one (which the collapse deletes). This
     * object must not be used afterwards; the counters of the returned one start again (the new name's header
     * counts, when rewritten).
     */
    public PmRegion relink(Path newPath, long[] geometry) {
        PmRegion renamed = new PmRegion(newPath, arena, mapping, syncMapped, writeBack, latency);
        if (geometry != null) {
            PmFileHeader.write(mapping, mapping.get(Words.INT_U, PmFileHeader.KIND_OFFSET), data.byteSize(), geometry);
            renamed.localBytes.add(PmFileHeader.LENGTH);
            mapping.asSlice(0, PmFileHeader.LENGTH).force();
            if (durable != null) {
                durable.copyLines(mapping, 0, PmFileHeader.LENGTH);
            }
        }
        try {
            Files.createLink(newPath, path);
            if (durable != null) {
                renamed.durable = durable.linkedFor(newPath);
            }
            Files.delete(path);
            Files.deleteIfExists(DurableImage.pathFor(path));
            forceDirectory(newPath);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot rename PM file " + path + " to " + newPath, e);
        }
        return renamed;
    }

    /**
     * Unmaps the region and deletes its file, then its durable image (a crash between the two leaves an image
     * without a file, which the collapse deletes).
     */
    public void closeAndDelete() {
        close();
        try {
            Files.deleteIfExists(path);
            Files.deleteIfExists(DurableImage.pathFor(path));
        } catch (IOException e) {
            throw new UncheckedIOException("cannot delete PM file " + path, e);
        }
    }

    /** Unmaps the region; segments obtained from it become inaccessible. */
    @Override
    public void close() {
        arena.close();
    }

    @Override
    public String toString() {
        return "PmRegion[" + path + ", " + dataLength() + " data bytes" + (syncMapped ? ", MAP_SYNC" : "") + "]";
    }
}
