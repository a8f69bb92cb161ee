package io.erda.core.pm;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.lang.foreign.MemorySegment;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.SplittableRandom;
import java.util.stream.Stream;

/**
 * Power-failure emulation (docs/ARCHITECTURE.md, [persistence] and [recovery]; PMDK's pmreorder idea): a store
 * directory whose PM files each keep a durable image ({@code NAME.durable}, {@link PmRegion}), and the offline
 * {@link #collapse} that a campaign runs after killing the server: every 64-byte line where a file and its image
 * differ was written but not made durable, and at random (seeded) survives as written (the line was evicted
 * before the failure), is dropped back to its durable content, or is torn per 8-byte word. The result becomes the
 * file and its image, so the server restarts on what a real power failure could have left.
 *
 * <p>The emulation is on while the directory holds the {@link #MARKER} file ({@link #enable}); files created and
 * deleted are file-system operations, which the store already makes durable, so only contents are collapsed. A
 * file without an image (made before the emulation was switched on) is durable as it is; an image whose file is gone
 * (a crash between the two deletions) is deleted.
 *
 * <p>Cost: the collapse reads every file and its image whole (positional reads, which leave tmpfs holes
 * unallocated), so it runs at memory bandwidth over the files' full lengths: use small regions in this mode.
 */
public final class PowerFailure {
    /** The file that switches the emulation on for a directory. */
    public static final String MARKER = "power-failure-emulation";
    /** What a PM file's durable image adds to its name. */
    public static final String IMAGE_SUFFIX = ".durable";
    private static final int LINE = WriteLatencyModel.CACHE_LINE;
    private static final int WORD = Long.BYTES;
    /** What {@link Policy#RANDOM} draws from, one in three each. */
    private static final Policy[] FATES = {Policy.KEEP, Policy.DROP, Policy.TEAR};

    /** What happens to a line that was written but not made durable. */
    public enum Policy {
        /** Each line at random: kept, dropped or torn, one chance in three each. */
        RANDOM,
        /** Every such line reverts to its durable content (the harshest failure). */
        DROP,
        /** Every such line survives as written (everything was evicted in time). */
        KEEP,
        /** Every such line is torn: each 8-byte word at random as written or as durable. */
        TEAR;

        /** The policy named {@code name} (case-insensitive), or an error naming the choices. */
        public static Policy of(String name) {
            for (Policy p : values()) {
                if (p.name().equalsIgnoreCase(name)) {
                    return p;
                }
            }
            throw new IllegalArgumentException("power-failure policy '" + name + "' is none of "
                    + Stream.of(values()).map(p -> p.name().toLowerCase(Locale.ROOT)).toList());
        }
    }

    /**
     * What the collapse did to one file: {@code lines} differed from the durable image; each was kept, dropped or
     * torn.
     */
    public record FileReport(String file, long lines, long kept, long dropped, long torn) {
        @Override
        public String toString() {
            return file + ": " + lines + " lines not durable: " + kept + " kept, " + dropped + " dropped, " + torn
                    + " torn";
        }
    }

    /** What a collapse did: per file with differences, and the totals. */
    public record Report(long seed, Policy policy, int filesCompared, List<FileReport> files,
                         List<String> orphansDeleted) {
        public long lines() {
            return files.stream().mapToLong(FileReport::lines).sum();
        }

        public long kept() {
            return files.stream().mapToLong(FileReport::kept).sum();
        }

        public long dropped() {
            return files.stream().mapToLong(FileReport::dropped).sum();
        }

        public long torn() {
            return files.stream().mapToLong(FileReport::torn).sum();
        }

        @Override
        public String toString() {
            StringBuilder out = new StringBuilder();
            for (FileReport f : files) {
                out.append("power-fail: ").append(f).append('\n');
            }
            for (String orphan : orphansDeleted) {
                out.append("power-fail: ").append(orphan).append(": durable image of a deleted file, removed\n");
            }
            return out.append("power-fail: seed ").append(seed).append(", policy ")
                    .append(policy.name().toLowerCase(Locale.ROOT)).append(", ").append(filesCompared)
                    .append(" files compared: ").append(lines()).append(" lines not durable: ").append(kept())
                    .append(" kept, ").append(dropped()).append(" dropped, ").append(torn()).append(" torn").toString();
        }
    }

    private PowerFailure() {
    }

    /** Switches the emulation on for {@code directory} (created if missing): PM files opened from now keep images. */
    public static void enable(Path directory, String description) {
        try {
            Files.createDirectories(directory);
            Files.writeString(directory.resolve(MARKER), description + "\n", StandardCharsets.UTF_8);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot switch power-failure emulation on in " + directory, e);
        }
    }

    /** Whether {@code directory} keeps durable images. */
    public static boolean enabled(Path directory) {
        return Files.exists(directory.resolve(MARKER));
    }

    /** Switches the emulation off: deletes the marker and every durable image (nothing is collapsed). */
    public static void disable(Path directory) {
        if (!Files.isDirectory(directory)) {
            return; // a store yet to be created keeps nothing
        }
        try {
            Files.deleteIfExists(directory.resolve(MARKER));
            for (Path image : images(directory)) {
                Files.deleteIfExists(image);
            }
        } catch (IOException e) {
            throw new UncheckedIOException("cannot switch power-failure emulation off in " + directory, e);
        }
    }

    /**
     * Collapses every file of {@code directory} that has a durable image to what a power failure could leave (the
     * server must not run): lines that differ are kept, dropped or torn by {@code policy}, drawn from {@code seed}
     * (mixed with each file's name, so a file's fate does not depend on the others); the result is written as the
     * file and as its image.
     */
    public static Report collapse(Path directory, long seed, Policy policy) {
        if (!Files.isDirectory(directory)) {
            throw new IllegalArgumentException("store directory " + directory + " does not exist");
        }
        List<FileReport> files = new ArrayList<>();
        List<String> orphans = new ArrayList<>();
        int compared = 0;
        try {
            for (Path image : images(directory)) {
                String imageName = image.getFileName().toString();
                Path live = image.resolveSibling(imageName.substring(0, imageName.length() - IMAGE_SUFFIX.length()));
                if (!Files.exists(live)) {
                    Files.delete(image);
                    orphans.add(imageName);
                    continue;
                }
                compared++;
                long fileSalt = 0x9E37_79B9_7F4A_7C15L * live.getFileName().toString().hashCode();
                SplittableRandom random = new SplittableRandom(seed ^ fileSalt);
                FileReport report = collapse(live, image, random, policy);
                if (report.lines() > 0) {
                    files.add(report);
                }
            }
            try (Stream<Path> listing = Files.list(directory)) {
                String copying = IMAGE_SUFFIX + DurableImage.PARTIAL_SUFFIX; // an image DurableImage was making
                for (Path partial : listing.filter(p -> p.getFileName().toString().endsWith(copying)).toList()) {
                    Files.delete(partial);
                }
            }
        } catch (IOException e) {
            throw new UncheckedIOException("cannot collapse " + directory + " to its durable images", e);
        }
        return new Report(seed, policy, compared, files, orphans);
    }

    private static List<Path> images(Path directory) throws IOException {
        try (Stream<Path> listing = Files.list(directory)) {
            return listing.filter(p -> p.getFileName().toString().endsWith(IMAGE_SUFFIX)).sorted().toList();
        }
    }

    private static FileReport collapse(Path live, Path image, SplittableRandom random, Policy policy) throws IOException {
        long kept = 0;
        long dropped = 0;
        long torn = 0;
        try (FileChannel liveChannel = FileChannel.open(live, StandardOpenOption.READ, StandardOpenOption.WRITE);
             FileChannel imageChannel = FileChannel.open(image, StandardOpenOption.READ, StandardOpenOption.WRITE)) {
            long length = liveChannel.size();
            DurableImage.requireLength(image, imageChannel.size(), length);
            ByteBuffer liveBuffer = ByteBuffer.allocateDirect(DurableImage.CHUNK);
            ByteBuffer imageBuffer = ByteBuffer.allocateDirect(DurableImage.CHUNK);
            MemorySegment written = MemorySegment.ofBuffer(liveBuffer);
            MemorySegment durable = MemorySegment.ofBuffer(imageBuffer);
            for (long at = 0; at < length; at += DurableImage.CHUNK) {
                int n = (int) Math.min(DurableImage.CHUNK, length - at);
                DurableImage.readFully(liveChannel, liveBuffer, at, n);
                DurableImage.readFully(imageChannel, imageBuffer, at, n);
                long from = 0;
                long differs;
                while (from < n && (differs = MemorySegment.mismatch(written, from, n, durable, from, n)) >= 0) {
                    long line = (from + differs) / LINE * LINE; // mismatch is relative to from; chunks start on a line
                    long lineEnd = Math.min(line + LINE, n);
                    Policy fate = policy == Policy.RANDOM ? FATES[random.nextInt(FATES.length)] : policy;
                    switch (fate) {
                        case KEEP -> kept++;
                        case DROP -> {
                            MemorySegment.copy(durable, line, written, line, lineEnd - line);
                            dropped++;
                        }
                        default -> {
                            for (long word = line; word < lineEnd; word += WORD) {
                                if (random.nextBoolean()) {
                                    MemorySegment.copy(durable, word, written, word, Math.min(WORD, lineEnd - word));
                                }
                            }
                            torn++;
                        }
                    }
                    writeFully(liveChannel, written.asSlice(line, lineEnd - line), at + line);
                    writeFully(imageChannel, written.asSlice(line, lineEnd - line), at + line);
                    from = lineEnd;
                }
            }
            if (kept + dropped + torn > 0) {
                liveChannel.force(false);
                imageChannel.force(false);
            }
        }
        return new FileReport(live.getFileName().toString(), kept + dropped + torn, kept, dropped, torn);
    }

    private static void writeFully(FileChannel channel, MemorySegment bytes, long position) throws IOException {
        ByteBuffer buffer = bytes.asByteBuffer();
        while (buffer.hasRemaining()) {
            channel.write(buffer, position + buffer.position());
        }
    }
}
