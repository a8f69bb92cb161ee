package io.erda.bench.store;

import io.erda.core.PmDirectory;
import io.erda.core.StoreGeometry;
import io.erda.core.pm.PmFileHeader;
import io.erda.protocol.memory.AtomicWord;
import io.erda.protocol.memory.KeyHash;
import io.erda.protocol.memory.LogAddress;
import io.erda.protocol.memory.NeighbourhoodWindow;
import io.erda.protocol.memory.ObjectLayout;
import io.erda.protocol.memory.TableGeometry;
import io.erda.protocol.memory.Words;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.channels.FileChannel;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.function.IntFunction;

/**
 * What the memory a GET reads costs on this machine, with no Erda code in the way: the store's own files mapped
 * read-only by this process, as an shm client maps them, and for random keys of the load the two copies a GET makes,
 * nothing else: the key's table window, then the object its entry names. Each key is chosen by a value the last
 * object held, so one lookup's reads never overlap the next one's, as in a GET loop. This is the least a GET over this
 * store can take here; the rest of a GET's mean is Erda's (the fabric's checks, hashing, CRC, the copy to the caller).
 * In a VM a random access grows dearer with the memory it ranges over, and more than any guest page size changes
 * (the host translates too): on 2026-11-27 a 64-byte line at random in a 4 GiB file took 390 ns with 2 MiB pages and
 * with 1 GiB pages alike, in 1 GiB 220 ns, in 256 MiB 200 ns, in 8 MiB 47 ns.
 */
final class MemoryFloor {
    /** Mean ns of the lookups, and how many of the keys the table did not have (0 for a loaded store). */
    record Result(double lookupNanos, long lookups, long missing) { }

    private MemoryFloor() {
    }

    /**
     * Looks up random keys of {@code keys} (key {@code i} is {@code key.apply(i)}) in the store in {@code directory}
     * for {@code seconds}, after 0.3 s unmeasured (the JIT, this process's page tables), copying {@code objectBytes} of
     * each object as a GET's READ does.
     */
    static Result measure(Path directory, int keys, IntFunction<byte[]> key, int objectBytes, double seconds) {
        try (Arena arena = Arena.ofConfined()) {
            Lookups lookups = new Lookups(directory, arena, keys, key, objectBytes);
            lookups.run(0.3, true);
            return lookups.run(seconds, false);
        }
    }

    /** The store's files mapped, the keys' hashes (a GET's caller has its key; hashing it is Erda's work) and buffers. */
    private static final class Lookups {
        private final TableGeometry table;
        private final MemorySegment tableData;
        private final Map<Integer, MemorySegment[]> chains;
        private final long regionSize;
        private final MemorySegment window;
        private final MemorySegment object;
        private final int objectBytes;
        private final long[] hashes;
        private long dependency;
        private int next;

        Lookups(Path directory, Arena arena, int keys, IntFunction<byte[]> key, int objectBytes) {
            StoreGeometry stored = PmDirectory.storedGeometry(directory);
            table = stored.table();
            regionSize = stored.log().regionSize();
            tableData = map(directory.resolve(PmDirectory.TABLE_FILE), arena).asSlice(PmFileHeader.LENGTH);
            chains = chains(directory, stored.heads(), arena);
            window = arena.allocate(table.windowLength(), 64);
            object = arena.allocate(objectBytes, 64);
            this.objectBytes = objectBytes;
            // random keys, read in turn: a sequential walk of this array, which the prefetcher keeps in cache
            SplittableRandom random = new SplittableRandom(5);
            hashes = new long[Math.min(keys, 1 << 20)];
            for (int i = 0; i < hashes.length; i++) {
                hashes[i] = KeyHash.hash(key.apply(random.nextInt(keys)));
            }
        }

        /** Lookups for {@code seconds}; {@code check}: each object must hold a key of the hash looked up. */
        Result run(double seconds, boolean check) {
            long lookups = 0;
            long missing = 0;
            long start = System.nanoTime();
            long deadline = start + (long) (seconds * 1e9);
            long now;
            do {
                for (int n = 0; n < 1000; n++) {
                    // (dependency & 1) is 0 or 1, so the walk goes on, but each lookup waits for the last one's object
                    next = (int) ((next + 1 + (dependency & 1)) % hashes.length);
                    if (!lookUp(hashes[next])) {
                        missing++;
                    } else if (check && !holdsKeyOf(hashes[next])) {
                        throw new IllegalStateException("the table entry of hash " + hashes[next] + " led to bytes that"
                                + " are not an object of that key: the store's files were read wrongly");
                    }
                }
                lookups += 1000;
                now = System.nanoTime();
            } while (now - deadline < 0);
            return new Result((now - start) / (double) lookups, lookups, missing);
        }

        /** Whether the last object copied is one whose key has {@code hash}. */
        private boolean holdsKeyOf(long hash) {
            if (object.get(ValueLayout.JAVA_BYTE, ObjectLayout.TYPE_OFFSET) != ObjectLayout.TYPE_OBJECT) {
                return false;
            }
            int keyLength = Short.toUnsignedInt(object.get(Words.SHORT_U, ObjectLayout.KEY_LENGTH_OFFSET));
            return ObjectLayout.HEADER_LENGTH + keyLength <= objectBytes
                    && KeyHash.hash(object.asSlice(ObjectLayout.HEADER_LENGTH, keyLength)) == hash;
        }

        /** A GET's two copies for the key of {@code hash}: its window, then its first candidate's object. */
        private boolean lookUp(long hash) {
            MemorySegment.copy(tableData, table.windowOffset(table.homeBucket(hash)), window, 0, table.windowLength());
            long candidates = NeighbourhoodWindow.candidates(window, table.neighbourhood(), hash);
            if (candidates == 0) {
                return false;
            }
            int index = Long.numberOfTrailingZeros(candidates);
            long chainOffset = LogAddress.bytesForUnits(AtomicWord.current(NeighbourhoodWindow.atomicWord(window, index)));
            MemorySegment region = chains.get(NeighbourhoodWindow.headId(window, index))[
                    LogAddress.regionIndexForOffset(chainOffset, regionSize)];
            long at = LogAddress.offsetInRegion(chainOffset, regionSize);
            MemorySegment.copy(region, at, object, 0, Math.min(objectBytes, region.byteSize() - at));
            dependency = object.get(ValueLayout.JAVA_LONG_UNALIGNED, objectBytes - Long.BYTES);
            return true;
        }
    }

    /** Each head's regions of its newest chain, in chain order, mapped read-only (their data areas). */
    private static Map<Integer, MemorySegment[]> chains(Path directory, int heads, Arena arena) {
        Map<Integer, MemorySegment[]> chains = new HashMap<>();
        List<List<Path>> files = PmDirectory.regionFiles(directory, heads);
        for (int head = 0; head < heads; head++) {
            Map<Long, Map<Integer, MemorySegment>> byGeneration = new HashMap<>(); // generation -> position -> region
            for (Path file : files.get(head)) {
                MemorySegment region = map(file, arena);
                byGeneration.computeIfAbsent(geometry(region, PmDirectory.GEOMETRY_GENERATION), g -> new HashMap<>())
                        .put((int) geometry(region, PmDirectory.GEOMETRY_POSITION), region.asSlice(PmFileHeader.LENGTH));
            }
            if (byGeneration.isEmpty()) {
                throw new IllegalStateException("head " + head + " has no log region in " + directory);
            }
            Map<Integer, MemorySegment> newest = byGeneration.get(byGeneration.keySet().stream().max(Long::compare).orElseThrow());
            MemorySegment[] chain = new MemorySegment[newest.size()];
            newest.forEach((position, region) -> chain[position] = region);
            chains.put(head, chain);
        }
        return chains;
    }

    private static long geometry(MemorySegment file, int slot) {
        return Words.get(file, PmFileHeader.geometryOffset(slot));
    }

    private static MemorySegment map(Path file, Arena arena) {
        try (FileChannel channel = FileChannel.open(file, StandardOpenOption.READ)) {
            return channel.map(FileChannel.MapMode.READ_ONLY, 0, channel.size(), arena);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot map " + file, e);
        }
    }
}
