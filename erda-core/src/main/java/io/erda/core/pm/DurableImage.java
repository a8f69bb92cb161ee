package io.erda.core.pm;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
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
 * <p>Thread-safety: copies of disjoint or equal bytes may run concurrently, as stores to the same memory may.
 */
final class DurableImage {
    /** Bytes of the chunks whole-file scans read (with positional reads, which leave a tmpfs hole unallocated). */
    static final int CHUNK = 1 << 20;
    private static final long LINE = WriteLatencyModel.CACHE_LINE;

    private final Path path;
    private final MemorySegment mapping;

    private DurableImage(Path path, MemorySegment mapping) {
        this.path = path;
        this.mapping = mapping;
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
     */
    static DurableImage create(Path live, MemorySegment liveMapping, Arena arena) {
        Path image = pathFor(live);
        try {
            Files.deleteIfExists(image);
            DurableImage created = map(image, liveMapping.byteSize(), arena, true);
            created.copyLines(liveMapping, 0, PmFileHeader.LENGTH);
            return created;
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
                long length = Files.size(image);
                if (length != fileLength) {
                    throw new PmFormatException(image + ": durable image length " + length + ", expected " + fileLength
                            + " (the length of " + live.getFileName() + ")");
                }
                return map(image, fileLength, arena, false);
            }
            Path partial = image.resolveSibling(image.getFileName() + ".copying");
            sparseCopy(live, partial, fileLength);
            Files.move(partial, image, java.nio.file.StandardCopyOption.ATOMIC_MOVE);
            return map(image, fileLength, arena, false);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot open durable image " + image, e);
        }
    }

    private static DurableImage map(Path image, long length, Arena arena, boolean create) throws IOException {
        try (FileChannel channel = create
                ? FileChannel.open(image, StandardOpenOption.READ, StandardOpenOption.WRITE, StandardOpenOption.CREATE_NEW)
                : FileChannel.open(image, StandardOpenOption.READ, StandardOpenOption.WRITE)) {
            if (create) {
                channel.write(ByteBuffer.allocate(1), length - 1); // sparse: reads as zeros
            }
            return new DurableImage(image, channel.map(FileChannel.MapMode.READ_WRITE, 0, length, arena));
        }
    }

    /** Copies {@code from} to a new sparse file {@code to} of {@code length} bytes, skipping chunks of zeros. */
    static void sparseCopy(Path from, Path to, long length) throws IOException {
        Files.deleteIfExists(to);
        try (FileChannel in = FileChannel.open(from, StandardOpenOption.READ);
             FileChannel out = FileChannel.open(to, StandardOpenOption.WRITE, StandardOpenOption.CREATE_NEW)) {
            out.write(ByteBuffer.allocate(1), length - 1);
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
        MemorySegment.copy(liveMapping, first, mapping, first, end - first);
    }

    /** The image's mapping, file offset 0 (what a durable mirror of a registration slices). */
    MemorySegment mapping() {
        return mapping;
    }

    Path path() {
        return path;
    }
}
