package io.erda.core.pm;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.VarHandle;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;

/**
 * The durable image of one PM file under power-failure emulation ({@link PowerFailure}): {@code NAME.durable} beside
 * {@code NAME}, a sparse file of the same length holding what a power failure would keep. {@link PmRegion} copies
 * into it what it makes durable ({@code persist}, {@code setMutableWord}, {@code create}, {@code zeroForReuse}), in
 * whole 64-byte lines as a cache-line write-back would; fabric providers copy one-sided writes that are durable on
 * placement into its mapping (the registration's durable mirror).
 *
 * <p><b>Copy lock.</b> Every copy into the image, this process's or a mirroring provider's (an shm initiator is
 * another process), reads the file's current bytes and writes them to the image while holding one lock word, kept
 * in {@link #LOCK_BYTES} bytes after the image's copy of the file (image length = file length + LOCK_BYTES). So the
 * image sees the file's bytes in the order they changed: without it, a provider's copy of a write that a server
 * store then overwrote and persisted (a Read After Write ring slot's header, zeroed once applied) could land after
 * the persist and resurrect the overwritten bytes. The lock is a spin lock (CAS 0 to 1, release by storing 0); a
 * holder that died (kill -9) is stolen from after {@link #LOCK_SPIN_NANOS}, and opening the image resets it.
 */
final class DurableImage {
    /** Bytes of the chunks whole-file scans read (with positional reads, which leave a tmpfs hole unallocated). */
    static final int CHUNK = 1 << 20;
    /** Bytes after the file's copy that hold the copy lock word (at their start). */
    static final int LOCK_BYTES = 64;
    /** How long a copy waits for the lock before it takes it from a holder presumed dead. */
    static final long LOCK_SPIN_NANOS = 1_000_000_000L;
    private static final long LINE = WriteLatencyModel.CACHE_LINE;
    private static final VarHandle LOCK = ValueLayout.JAVA_LONG.varHandle();

    private final Path path;
    private final MemorySegment mapping;
    private final MemorySegment lock;

    private DurableImage(Path path, MemorySegment mapping, MemorySegment lock) {
        this.path = path;
        this.mapping = mapping;
        this.lock = lock;
    }

    /** What an image is called while it is being made, until it is renamed complete (a crash leaves it partial). */
    static final String PARTIAL_SUFFIX = ".copying";

    /** The name {@code image} has while it is being made. */
    static Path partialFor(Path image) {
        return image.resolveSibling(image.getFileName() + PARTIAL_SUFFIX);
    }

    /** The image of the PM file at {@code live}: {@code NAME.durable}. */
    static Path pathFor(Path live) {
        return live.resolveSibling(live.getFileName() + PowerFailure.IMAGE_SUFFIX);
    }

    /**
     * Whether PM files in {@code live}'s directory keep durable images: the directory holds the
     * {@link PowerFailure#MARKER} file.
     */
    static boolean kept(Path live) {
        Path dir = live.toAbsolutePath().getParent();
        return dir != null && Files.exists(dir.resolve(PowerFailure.MARKER));
    }

    /**
     * The image of a file just made (its header written and forced, its name just linked): a fresh sparse image of
     * the same length holding the header, replacing any image a crash left under that name (that of a deleted file).
     * Made under a temporary name and renamed once the header is in it: a kill while it was made used to leave an
     * image with part of the header (magic copied, version not), which the next power failure restored over the
     * file (the region then refused to open: "format version 0, expected 1"). Now a crash leaves no image, and the
     * file, which holds only its header, counts as durable as it is.
     */
    static DurableImage create(Path live, MemorySegment liveMapping, Arena arena) {
        Path image = pathFor(live);
        Path partial = partialFor(image);
        try {
            Files.deleteIfExists(image);
            Files.deleteIfExists(partial);
            DurableImage made = map(partial, liveMapping.byteSize(), arena, true);
            made.copyLines(liveMapping, 0, PmFileHeader.LENGTH);
            Files.move(partial, image, java.nio.file.StandardCopyOption.ATOMIC_MOVE);
            return new DurableImage(image, made.mapping, made.lock); // the mapping follows the file's new name
        } catch (IOException e) {
            throw new UncheckedIOException("cannot create durable image " + image, e);
        }
    }

    /**
     * The image of an existing file; a file that has none yet (the store was made without the emulation, or before
     * it was switched on) is durable as it is, so its image starts as a sparse copy of it.
     */
    static DurableImage open(Path live, long fileLength, Arena arena) {
        Path image = pathFor(live);
        try {
            if (Files.exists(image)) {
                requireLength(image, Files.size(image), fileLength);
                DurableImage opened = map(image, fileLength, arena, false);
                LOCK.setVolatile(opened.lock, 0L, 0L); // a holder of the last run is gone
                return opened;
            }
            Path partial = partialFor(image);
            sparseCopy(live, partial, fileLength);
            Files.move(partial, image, java.nio.file.StandardCopyOption.ATOMIC_MOVE);
            return map(image, fileLength, arena, false);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot open durable image " + image, e);
        }
    }

    /** Refuses an image whose length is not the file's plus the lock bytes. */
    static void requireLength(Path image, long imageLength, long fileLength) {
        if (imageLength != fileLength + LOCK_BYTES) {
            throw new PmFormatException(image + ": durable image length " + imageLength + ", expected "
                    + (fileLength + LOCK_BYTES) + " (its file's length " + fileLength + " and " + LOCK_BYTES
                    + " bytes of copy lock)");
        }
    }

    private static DurableImage map(Path image, long length, Arena arena, boolean create) throws IOException {
        try (FileChannel channel = create
                ? FileChannel.open(image, StandardOpenOption.READ, StandardOpenOption.WRITE, StandardOpenOption.CREATE_NEW)
                : FileChannel.open(image, StandardOpenOption.READ, StandardOpenOption.WRITE)) {
            if (create) {
                channel.write(ByteBuffer.allocate(1), length + LOCK_BYTES - 1); // sparse: reads as zeros
            }
            MemorySegment whole = channel.map(FileChannel.MapMode.READ_WRITE, 0, length + LOCK_BYTES, arena);
            return new DurableImage(image, whole.asSlice(0, length), whole.asSlice(length, Long.BYTES));
        }
    }

    /**
     * Copies {@code from} to a new sparse image {@code to} of {@code length} bytes and the lock bytes, skipping
     * chunks of zeros.
     */
    static void sparseCopy(Path from, Path to, long length) throws IOException {
        Files.deleteIfExists(to);
        try (FileChannel in = FileChannel.open(from, StandardOpenOption.READ);
             FileChannel out = FileChannel.open(to, StandardOpenOption.WRITE, StandardOpenOption.CREATE_NEW)) {
            out.write(ByteBuffer.allocate(1), length + LOCK_BYTES - 1);
            ByteBuffer chunk = ByteBuffer.allocateDirect(CHUNK);
            MemorySegment bytes = MemorySegment.ofBuffer(chunk); // the whole buffer, whatever its position later
            MemorySegment zeros = MemorySegment.ofArray(new byte[CHUNK]);
            for (long at = 0; at < length; at += CHUNK) {
                int n = readFully(in, chunk, at, (int) Math.min(CHUNK, length - at));
                if (MemorySegment.mismatch(bytes, 0, n, zeros, 0, n) >= 0) {
                    chunk.position(0).limit(n);
                    while (chunk.hasRemaining()) {
                        out.write(chunk, at + chunk.position());
                    }
                }
            }
        }
    }

    /** Reads {@code length} bytes at {@code position} into {@code buffer} (from its start); returns {@code length}. */
    static int readFully(FileChannel channel, ByteBuffer buffer, long position, int length) throws IOException {
        buffer.clear().limit(length);
        while (buffer.hasRemaining()) {
            if (channel.read(buffer, position + buffer.position()) < 0) {
                throw new IOException("unexpected end of file at " + (position + buffer.position()));
            }
        }
        return length;
    }

    /**
     * Makes {@code [fileOffset, fileOffset+length)} of {@code liveMapping} durable: copies the 64-byte lines it
     * touches into the image.
     */
    void copyLines(MemorySegment liveMapping, long fileOffset, long length) {
        if (length <= 0) {
            return;
        }
        long first = Math.floorDiv(fileOffset, LINE) * LINE;
        long end = Math.min(liveMapping.byteSize(), Math.floorDiv(fileOffset + length + LINE - 1, LINE) * LINE);
        lock();
        try {
            MemorySegment.copy(liveMapping, first, mapping, first, end - first);
        } finally {
            LOCK.setVolatile(lock, 0L, 0L);
        }
    }

    private void lock() {
        long giveUp = System.nanoTime() + LOCK_SPIN_NANOS;
        while (!LOCK.compareAndSet(lock, 0L, 0L, 1L)) {
            if (System.nanoTime() - giveUp > 0) {
                return; // its holder died mid-copy: take it over
            }
            Thread.onSpinWait();
        }
    }

    /**
     * This image also under the name of {@code newLive}'s image (a hard link, failing if that name exists); the
     * mapping carries over. The caller removes the old name once the file itself has its new one.
     */
    DurableImage linkedFor(Path newLive) throws IOException {
        Path image = pathFor(newLive);
        Files.createLink(image, path);
        return new DurableImage(image, mapping, lock);
    }

    /** The copy lock word (shared with providers that mirror writes into the image). */
    MemorySegment lockWord() {
        return lock;
    }

    /** File offset of the copy lock word in the image file. */
    long lockFileOffset() {
        return mapping.byteSize();
    }

    /** The image's mapping, file offset 0 (what a durable mirror of a registration slices). */
    MemorySegment mapping() {
        return mapping;
    }

    Path path() {
        return path;
    }
}
