package io.erda.server.store;

import io.erda.core.PmDirectory;
import io.erda.core.log.LogHead;
import io.erda.core.pm.PmRegion;
import io.erda.fabric.Access;
import io.erda.fabric.Backing;
import io.erda.fabric.Fabric;
import io.erda.fabric.MemoryRegion;
import io.erda.fabric.RegisterOptions;
import io.erda.protocol.HeadArray;
import io.erda.protocol.PmConfiguration;
import io.erda.protocol.RegionDescriptor;
import io.erda.protocol.memory.TableGeometry;
import io.erda.server.platform.PmEmulation;
import java.util.ArrayList;
import java.util.EnumSet;
import java.util.List;

/**
 * The store's PM as clients see it (paper §3.3: the server registers the table and the log regions; the head array
 * tells clients where each head's chain is). The table's data area is registered read-only (clients never write the
 * table); each log region's data area read-write, with the PM write-latency model. Registrations name their file
 * and offset so the shm provider can export them. Under power-failure emulation, one-sided writes into log regions
 * are mirrored into the regions' durable images when the emulated configuration makes them durable ({@link
 * PmEmulation#logRegion}).
 *
 * <p>The table descriptor covers the bucket array; the stripe descriptor the version words. Both share one
 * registration and rkey, so {@code table.address + TableGeometry.windowVersionsOffset(home)} and
 * {@code stripes.address + stripe * 8} name the same word.
 *
 * <p>A chain that grows gets its new region registered by {@link #chainGrew} and its head's generation bumped. A
 * region the head made ahead (core's {@code LogHead.prepareAhead}) was registered as it was made, on the preparer's
 * thread ({@link #madeAhead}): {@code chainGrew} runs under the store lock in the PUT that crossed the region's end,
 * and registering there (shm: rewriting the exports file; verbs: pinning the whole region) would stall every PUT
 * for milliseconds per new region.
 *
 * <p>Regions are keyed by slot (core's {@code LogChain}): region {@code i} of the head array covers chain offsets
 * {@code [i*regionSize, (i+1)*regionSize)}, and a slot with no region (freed by the cleaner) is a zero-length
 * descriptor that every access fails against. While a head is being cleaned its flag is set (paper §4.4: clients
 * use two-sided requests for it); {@link #retiring} deregisters the cleaner's old chain before it is zeroed.
 */
public final class RegionRegistry implements AutoCloseable {
    private final Fabric fabric;
    private final PmDirectory directory;
    private final long writeDelayNanos;
    /** The taxonomy configuration whose durability the log regions' registrations emulate ({@link PmEmulation}). */
    private final PmConfiguration configuration;
    private final MemoryRegion table;
    private final List<java.util.TreeMap<Integer, MemoryRegion>> heads = new ArrayList<>();
    private final int[] generations;
    private final boolean[] cleaning;
    /**
     * Regions handed to {@link #retiring}: never registered again. Without this a chain growing while the cleaner
     * retires would see the old regions still listed by the head (they leave it only when their file is deleted)
     * and register them again, racing the deletion.
     */
    private final java.util.Set<PmRegion> retired = java.util.Collections.newSetFromMap(new java.util.IdentityHashMap<>());
    /** Registrations of spare regions made ahead that no chain has taken yet. Guarded by this. */
    private final java.util.Map<PmRegion, MemoryRegion> ahead = new java.util.IdentityHashMap<>();
    private final StoreStats stats;
    /** What clients wrote one-sided into regions deregistered by {@link #retiring} (their registrations are gone). */
    private long retiredRemoteBytes;
    private boolean closed;

    /**
     * @param configuration when one-sided writes into log regions are durable ({@link PmEmulation#logRegion}):
     *                      mirrored into durable images, where kept, at that point
     */
    public RegionRegistry(Fabric fabric, PmDirectory directory, long writeDelayNanos, PmConfiguration configuration,
                          StoreStats stats) {
        this(fabric, directory, writeDelayNanos, configuration, stats, false);
    }

    /**
     * @param remoteAtomics whether clients may CAS the table's words (one-sided mode, docs/one-sided-put.md): the
     *                      table is then registered with remote atomic access besides remote read
     */
    public RegionRegistry(Fabric fabric, PmDirectory directory, long writeDelayNanos, PmConfiguration configuration,
                          StoreStats stats, boolean remoteAtomics) {
        this.fabric = fabric;
        this.stats = stats;
        this.directory = directory;
        this.writeDelayNanos = writeDelayNanos;
        this.configuration = java.util.Objects.requireNonNull(configuration, "configuration");
        PmRegion tableFile = directory.table().region();
        RegisterOptions tableOptions = RegisterOptions.of(remoteAtomics
                ? EnumSet.of(Access.REMOTE_READ, Access.REMOTE_ATOMIC) : EnumSet.of(Access.REMOTE_READ))
                .withBacking(new Backing(tableFile.path(), tableFile.dataFileOffset()));
        // clients' CASes write the table as their WRITEs write the log: durable when the configuration says so (a
        // power-failure emulation that kept no remote CAS lost one-sided updates the client had made durable)
        this.table = fabric.register(tableFile.data(), remoteAtomics
                ? PmEmulation.logRegion(tableOptions, tableFile, configuration) : tableOptions);
        this.generations = new int[directory.heads().size()];
        this.cleaning = new boolean[directory.heads().size()];
        for (LogHead head : directory.heads()) {
            heads.add(new java.util.TreeMap<>());
            chainGrew(head.headId());
            generations[head.headId()] = 0;
        }
        stats.regionsRegisteredAtGrowth.reset(); // the regions a store opens with are not growth
        for (LogHead head : directory.heads()) {
            head.onSpares(new LogHead.SpareListener() {
                @Override
                public void made(int headId, PmRegion region) {
                    madeAhead(region);
                }

                @Override
                public void discarded(int headId, PmRegion region) {
                    discardedAhead(region);
                }
            });
        }
    }

    /**
     * A spare region made ahead, on the preparer's thread: registers it now (outside this monitor: HEADS and
     * growth go on meanwhile). A failure is left for {@link #chainGrew}, which registers it the usual way.
     */
    private void madeAhead(PmRegion region) {
        MemoryRegion registration;
        try {
            registration = fabric.register(region.data(), options(region));
        } catch (RuntimeException e) {
            synchronized (this) {
                if (closed) {
                    return; // the server closed its fabric while the preparer made the spare: nothing to warn of
                }
            }
            java.util.logging.Logger.getLogger(RegionRegistry.class.getName()).warning(
                    "registering " + region.path() + " ahead failed; it is registered when the chain takes it: " + e);
            return;
        }
        synchronized (this) {
            if (!closed) {
                ahead.put(region, registration);
                stats.regionsRegisteredAhead.increment();
                return;
            }
        }
        registration.close();
    }

    /** A spare no chain took is deleted: its registration goes first. */
    private void discardedAhead(PmRegion region) {
        MemoryRegion registration;
        synchronized (this) {
            registration = ahead.remove(region);
        }
        if (registration != null) {
            registration.close();
        }
    }

    private RegisterOptions options(PmRegion region) {
        RegisterOptions options = RegisterOptions.of(EnumSet.of(Access.REMOTE_READ, Access.REMOTE_WRITE))
                .withBacking(new Backing(region.path(), region.dataFileOffset())).withWriteDelay(writeDelayNanos);
        return PmEmulation.logRegion(options, region, configuration);
    }

    /** The taxonomy configuration the server runs as (HELLO_REPLY and STATS report it). */
    public PmConfiguration configuration() {
        return configuration;
    }

    /** Registers the regions of {@code head} not registered yet, and bumps its generation if there were any. */
    public synchronized void chainGrew(int head) {
        java.util.TreeMap<Integer, MemoryRegion> registered = heads.get(head);
        LogHead log = directory.head(head);
        for (var described : log.describe().regions()) {
            int slot = described.regionIndex();
            if (!registered.containsKey(slot)) {
                PmRegion region;
                try {
                    region = log.resolve(slot * log.geometry().regionSize()).region();
                } catch (IllegalArgumentException retiredMeanwhile) {
                    continue; // the cleaner freed the slot after describe() listed it
                }
                if (retired.contains(region)) {
                    continue;
                }
                MemoryRegion madeAhead = ahead.remove(region);
                if (madeAhead == null) {
                    stats.regionsRegisteredAtGrowth.increment();
                }
                registered.put(slot, madeAhead != null ? madeAhead : fabric.register(region.data(), options(region)));
                generations[head]++;
            }
        }
    }

    /**
     * Deregisters regions the cleaner is about to zero and delete (before it does). Request workers look registrations
     * up under this monitor on every PUT, so it is held only to find and unlink them: each registered slot is resolved
     * once (a lookup of every retiring region in every slot would hold it tens of milliseconds with a GiB of small
     * regions), and the registrations are closed (a deregistration on verbs) after it is released, before this returns.
     */
    void retiring(int head, List<PmRegion> regions) {
        List<MemoryRegion> unlinked = new ArrayList<>();
        synchronized (this) {
            LogHead log = directory.head(head);
            long regionSize = log.geometry().regionSize();
            // an earlier run's regions have left their heads by now (pooled under a new identity, or deleted): forget
            // them, or the set would grow with every run of a long-lived server
            java.util.Set<PmRegion> listed = java.util.Collections.newSetFromMap(new java.util.IdentityHashMap<>());
            directory.heads().forEach(h -> listed.addAll(h.regions()));
            retired.removeIf(r -> !listed.contains(r));
            retired.addAll(regions);
            java.util.Set<PmRegion> retiringNow = java.util.Collections.newSetFromMap(new java.util.IdentityHashMap<>());
            retiringNow.addAll(regions);
            for (var it = heads.get(head).entrySet().iterator(); it.hasNext(); ) {
                var slot = it.next();
                // read before it.remove(): a TreeMap removes a node with two children by moving its successor's key
                // and value into that node, so the entry would then name the next slot's registration, and that live
                // registration would be closed (clients: REMOTE_ACCESS_ERROR on its rkey) while this one leaked
                long offset = slot.getKey() * regionSize;
                MemoryRegion registration = slot.getValue();
                if (log.isMapped(offset, 0) && retiringNow.contains(log.resolve(offset).region())) {
                    it.remove();
                    retiredRemoteBytes += registration.remoteBytesWritten();
                    unlinked.add(registration);
                    generations[head]++;
                }
            }
        }
        unlinked.forEach(MemoryRegion::close);
    }

    /** Marks a head as being cleaned or not (a new head array generation either way). */
    synchronized void cleaning(int head, boolean on) {
        cleaning[head] = on;
        generations[head]++;
    }

    /** The registration of the region at slot {@code index} of {@code head}. */
    public synchronized MemoryRegion region(int head, int index) {
        return heads.get(head).get(index);
    }

    public synchronized HeadArray headArray() {
        List<HeadArray.Head> described = new ArrayList<>();
        for (int head = 0; head < heads.size(); head++) {
            java.util.TreeMap<Integer, MemoryRegion> registered = heads.get(head);
            List<RegionDescriptor> regions = new ArrayList<>();
            int slots = registered.isEmpty() ? 0 : registered.lastKey() + 1;
            for (int slot = 0; slot < slots; slot++) {
                MemoryRegion r = registered.get(slot);
                regions.add(r == null ? new RegionDescriptor(0, 0, 0) : descriptor(r));
            }
            described.add(new HeadArray.Head(head, generations[head], cleaning[head], regions));
        }
        return new HeadArray(described);
    }

    public RegionDescriptor tableDescriptor() {
        TableGeometry g = directory.table().geometry();
        return new RegionDescriptor(table.address(), g.bucketOffset(g.bucketCount()), table.rkey());
    }

    public RegionDescriptor stripesDescriptor() {
        TableGeometry g = directory.table().geometry();
        return new RegionDescriptor(table.address() + g.stripeVersionsOffset(), g.stripeCount() * Long.BYTES, table.rkey());
    }

    /** Bytes peers wrote one-sided into the store (0 where the provider cannot see them, as with verbs). */
    public synchronized long remoteBytesWritten() {
        long sum = table.remoteBytesWritten() + retiredRemoteBytes;
        for (java.util.TreeMap<Integer, MemoryRegion> chain : heads) {
            for (MemoryRegion r : chain.values()) {
                sum += r.remoteBytesWritten();
            }
        }
        return sum;
    }

    private static RegionDescriptor descriptor(MemoryRegion r) {
        return new RegionDescriptor(r.address(), r.length(), r.rkey());
    }

    @Override
    public synchronized void close() {
        closed = true;
        ahead.values().forEach(MemoryRegion::close);
        ahead.clear();
        heads.forEach(chain -> chain.values().forEach(MemoryRegion::close));
        table.close();
    }
}
