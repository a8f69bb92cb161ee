package io.erda.fabric.shm;

import io.erda.fabric.DurableMirror;
import io.erda.fabric.UnfencedWrites;
import io.erda.fabric.FabricException;
import io.erda.fabric.Opcode;
import io.erda.fabric.Status;
import io.erda.fabric.WorkRequest;
import io.erda.fabric.emulated.IntKeyMap;
import io.erda.fabric.emulated.RegionTable;
import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.VarHandle;
import java.nio.channels.FileChannel;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.List;

/**
 * The initiator's view of a peer's exported memory, and the executor of one-sided operations against it: a READ
 * or WRITE is a {@link MemorySegment#copy}, CAS and FETCH_ADD are {@link VarHandle} atomics on the shared mapping
 * (atomic against the target's own atomics, as both map the same page-cache pages), FLUSH forces (msyncs) the
 * range. No thread of the target is involved. A region exported with a durable mirror has its mirror file mapped
 * too, and every WRITE or atomic copies what it placed into it under the mirror's lock word
 * ({@link io.erda.fabric.DurableMirror}).
 *
 * <p>Every access is checked here, on the initiator, against the descriptors the target exported
 * ({@link RegionTable#checkRegion}): rkey, range and access flag. The check is <b>cooperative</b>: any process
 * that can open the target's files could ignore it, exactly as it could scribble over any shared memory; shm
 * protects against bugs, not against hostile peers on the same host. Before each access the target's export
 * generation is read (one acquire load of a shared word); a changed generation reloads the exports and unmaps
 * regions that are gone, so an access after a deregistration fails with REMOTE_ACCESS_ERROR.
 *
 * <p>Not thread-safe: used under its endpoint's lock.
 */
final class PeerMemory implements AutoCloseable {
    private static final VarHandle LONG = ValueLayout.JAVA_LONG.varHandle();
    private static final int CACHE_LINE = 64;

    /**
     * Closes the mappings of regions the target retired, off the request path. Closing a shared arena is a handshake
     * with every thread of the JVM, and reload runs on a request's thread under its endpoint's lock: a cleaning that
     * retires a few hundred regions held a PUT there for up to about 100 ms, and the client's poller waited for that
     * lock (docs/MEASUREMENTS.md, "shm unmapping"). Nothing reaches a mapping once it has left {@link #mappings}: the endpoint
     * finds regions only there, under its lock.
     */
    private static final java.util.concurrent.ExecutorService UNMAPPER = java.util.concurrent.Executors
            .newSingleThreadExecutor(r -> Thread.ofPlatform().daemon().name("erda-shm-unmapper").unstarted(r));

    private final Path exportsFile;
    private final Arena countersArena = Arena.ofShared();
    private final MemorySegment counters;
    private final IntKeyMap<Mapping> mappings = new IntKeyMap<>();
    private RegionTable<ExportedRegion> table = new RegionTable<>(0);
    private long generation = -1;

    /**
     * @param mirror    the durable mirror's mapping, or null; {@code mirrorLock} its lock word
     * @param writeBack whether a FLUSH has anything to write back: false for a file that lives in memory only (tmpfs,
     *                  ramfs, hugetlbfs), where msync writes nothing and a FLUSH is a fence (0.4 µs of syscall saved
     *                  on every shm PUT's persist; the target's {@code PmRegion} does the same)
     */
    private record Mapping(ExportedRegion region, MemorySegment memory, MemorySegment mirror, MemorySegment mirrorLock,
                           Arena arena, boolean writeBack) {
    }

    /** This connection's writes a power failure could still take (power-failure emulation only). */
    private final UnfencedWrites unfenced = new UnfencedWrites();

    /** Hands what a one-sided write placed to the region's durable mirror, if it has one ({@link UnfencedWrites}). */
    private void mirror(Mapping m, long offset, long length) {
        if (m.mirror() != null) {
            unfenced.placed(m.memory(), m.mirror(), m.mirrorLock(), offset, length, m.region().mirrorDurability());
        }
    }

    /**
     * A SEND or WRITE_WITH_IMM of this connection is about to be published: the target's CPU sees it only after
     * every earlier WRITE was placed.
     */
    void messageSent() {
        unfenced.placementShown();
    }

    PeerMemory(Path peerHome) {
        this.exportsFile = peerHome.resolve(ShmFabric.EXPORTS_FILE);
        Path countersFile = peerHome.resolve(ShmFabric.COUNTERS_FILE);
        try (FileChannel ch = FileChannel.open(countersFile, StandardOpenOption.READ, StandardOpenOption.WRITE)) {
            counters = ch.map(FileChannel.MapMode.READ_WRITE, 0, ch.size(), countersArena);
        } catch (IOException e) {
            countersArena.close();
            throw new FabricException("cannot map the peer's shm counters " + countersFile + ": " + e.getMessage(), e);
        }
        CountersFile.verify(counters, countersFile.toString());
    }

    /**
     * The write-latency model's delay {@code wr} will spend (0 for reads, unknown regions and undelayed
     * regions), so that the endpoint can keep long modelled writes off the posting thread.
     */
    long modelledDelayNanos(WorkRequest wr) {
        boolean writes = wr.opcode() == Opcode.WRITE || wr.opcode() == Opcode.WRITE_WITH_IMM || wr.opcode().isAtomic();
        if (!writes || wr.length() == 0) {
            return 0; // a READ (every GET's two) looks nothing up
        }
        refreshIfStale();
        ExportedRegion region = table.get(wr.rkey());
        if (region == null) {
            return 0;
        }
        long a = wr.remoteAddress();
        return region.writeDelayNanosPerCacheLine() * ((a + wr.length() - 1) / CACHE_LINE - a / CACHE_LINE + 1);
    }

    private void refreshIfStale() {
        long current = CountersFile.generation(counters);
        if (current != generation) {
            reload(current);
        }
    }

    /** Executes a one-sided request whose local side was already checked. */
    Outcome execute(WorkRequest wr, MemorySegment local) {
        refreshIfStale();
        ExportedRegion region = table.admit(wr.opcode(), wr.remoteAddress(), wr.length(), wr.rkey());
        if (region == null && table.get(wr.rkey()) == null) {
            reload(CountersFile.generation(counters)); // one refresh before an unknown rkey is final
            region = table.admit(wr.opcode(), wr.remoteAddress(), wr.length(), wr.rkey());
        }
        if (region == null) {
            RegionTable.Check<ExportedRegion> check = table.check(wr.opcode(), wr.remoteAddress(), wr.length(),
                    wr.rkey());
            return new Outcome(check.status(), check.detail());
        }
        Mapping m;
        try {
            m = map(region);
        } catch (FabricException e) {
            return new Outcome(Status.REMOTE_OPERATION_ERROR, e.getMessage());
        }
        MemorySegment remote = m.memory();
        long offset = wr.remoteAddress() - region.address();
        int slot = region.counterSlot();
        switch (wr.opcode()) {
            case READ -> {
                unfenced.fenced(); // a READ completes after earlier WRITEs went through (the Flush it stands in for)
                MemorySegment.copy(remote, offset, local, wr.localOffset(), wr.length());
                CountersFile.add(counters, slot, CountersFile.BYTES_READ_OFFSET, wr.length());
            }
            case WRITE, WRITE_WITH_IMM -> {
                MemorySegment.copy(local, wr.localOffset(), remote, offset, wr.length());
                mirror(m, offset, wr.length());
                written(region, wr.remoteAddress(), wr.length());
            }
            case CAS -> {
                unfenced.placementShown(); // non-posted: executed after earlier WRITEs were placed
                long old = (long) LONG.compareAndExchange(remote, offset, wr.compareAdd(), wr.swap());
                local.set(ValueLayout.JAVA_LONG_UNALIGNED, wr.localOffset(), old);
                if (old == wr.compareAdd()) {
                    mirror(m, offset, WorkRequest.ATOMIC_LENGTH);
                    written(region, wr.remoteAddress(), WorkRequest.ATOMIC_LENGTH);
                }
            }
            case FETCH_ADD -> {
                unfenced.placementShown();
                long old = (long) LONG.getAndAdd(remote, offset, wr.compareAdd());
                local.set(ValueLayout.JAVA_LONG_UNALIGNED, wr.localOffset(), old);
                mirror(m, offset, WorkRequest.ATOMIC_LENGTH);
                written(region, wr.remoteAddress(), WorkRequest.ATOMIC_LENGTH);
            }
            case ATOMIC_WRITE -> {
                unfenced.placementShown();
                LONG.setVolatile(remote, offset, wr.swap());
                mirror(m, offset, WorkRequest.ATOMIC_LENGTH);
                written(region, wr.remoteAddress(), WorkRequest.ATOMIC_LENGTH);
            }
            case FLUSH -> {
                unfenced.fenced();
                if (wr.length() > 0 && m.writeBack()) {
                    remote.asSlice(offset, wr.length()).force();
                } else {
                    VarHandle.fullFence(); // a memory-only file: nothing to write back (Mapping)
                }
            }
            default -> throw new IllegalArgumentException(wr.opcode() + " is not one-sided");
        }
        return Outcome.SUCCESS;
    }

    /** Accounts bytes written and applies the region's PM write-latency model (busy-wait per cache line). */
    private void written(ExportedRegion region, long address, int length) {
        CountersFile.add(counters, region.counterSlot(), CountersFile.BYTES_WRITTEN_OFFSET, length);
        long delay = region.writeDelayNanosPerCacheLine();
        if (delay > 0 && length > 0) {
            long lines = ((address + length - 1) / CACHE_LINE) - (address / CACHE_LINE) + 1;
            CountersFile.add(counters, region.counterSlot(), CountersFile.LINES_DELAYED_OFFSET, lines);
            long until = System.nanoTime() + lines * delay;
            while (System.nanoTime() - until < 0) {
                Thread.onSpinWait();
            }
        }
    }

    private void reload(long expected) {
        ExportsFile.Snapshot snapshot = ExportsFile.read(exportsFile);
        // The target renames the file before it publishes the generation: a newer word means a newer file.
        for (int attempt = 0; snapshot.generation() < expected && attempt < 100; attempt++) {
            Thread.onSpinWait();
            snapshot = ExportsFile.read(exportsFile);
        }
        // each in one rebuild: the target exports every log region, and a cleaning adds and retires them by the hundred
        RegionTable<ExportedRegion> fresh = new RegionTable<>(0);
        fresh.putAll(snapshot.regions(), ExportedRegion::rkey);
        List<Mapping> gone = mappings.removeIf(m -> !m.region().equals(fresh.get(m.region().rkey())));
        if (!gone.isEmpty()) {
            UNMAPPER.execute(() -> gone.forEach(m -> m.arena().close()));
        }
        table = fresh;
        generation = snapshot.generation();
    }

    private Mapping map(ExportedRegion region) {
        Mapping m = mappings.get(region.rkey());
        if (m != null) {
            return m;
        }
        Arena arena = Arena.ofShared();
        try {
            MemorySegment memory = mapFile(region.file(), region.fileOffset(), region.length(), arena);
            MemorySegment mirror = region.mirrorFile() == null ? null
                    : mapFile(region.mirrorFile(), region.mirrorOffset(), region.length(), arena);
            MemorySegment lock = region.mirrorFile() == null ? null
                    : mapFile(region.mirrorFile(), region.mirrorLockOffset(), Long.BYTES, arena);
            m = new Mapping(region, memory, mirror, lock, arena, writeBack(region.file()));
        } catch (IOException | RuntimeException e) {
            arena.close();
            throw new FabricException("cannot map " + region.file() + " [" + region.fileOffset() + ", +" + region.length()
                    + ")" + (region.mirrorFile() == null ? "" : " and its durable mirror " + region.mirrorFile())
                    + " of rkey 0x" + Integer.toHexString(region.rkey()) + ": " + e.getMessage(), e);
        }
        mappings.put(region.rkey(), m);
        return m;
    }

    /** File system types whose files live in memory only: msync has nothing to write back. */
    private static final java.util.Set<String> MEMORY_ONLY = java.util.Set.of("tmpfs", "ramfs", "hugetlbfs");

    /** Whether msync of a mapping of {@code file} writes anything back (unknown: yes). */
    private static boolean writeBack(Path file) {
        try {
            return !MEMORY_ONLY.contains(java.nio.file.Files.getFileStore(file).type());
        } catch (IOException e) {
            return true;
        }
    }

    private static MemorySegment mapFile(Path file, long offset, long length, Arena arena) throws IOException {
        try (FileChannel ch = FileChannel.open(file, StandardOpenOption.READ, StandardOpenOption.WRITE)) {
            return ch.map(FileChannel.MapMode.READ_WRITE, offset, length, arena);
        }
    }

    @Override
    public void close() {
        mappings.removeIf(m -> true).forEach(m -> m.arena().close());
        countersArena.close();
    }
}
