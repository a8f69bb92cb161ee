package io.erda.server.baseline;

import io.erda.core.pm.PmFormatException;
import io.erda.core.pm.PmRegion;
import io.erda.core.pm.WriteLatencyModel;
import io.erda.fabric.Access;
import io.erda.fabric.Backing;
import io.erda.fabric.MemoryRegion;
import io.erda.fabric.RegisterOptions;
import io.erda.server.store.Store;
import io.erda.server.store.StoreStats;
import java.lang.foreign.MemorySegment;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.EnumSet;
import java.util.concurrent.atomic.LongAdder;
import java.util.function.BiFunction;
import java.util.function.Function;
import java.util.function.Supplier;
import java.util.logging.Level;
import java.util.logging.Logger;

/**
 * What the baselines' two PM logs ({@link RedoLog}, {@link ReadAfterWriteRing}) share: a PM file of the store's
 * directory, created the first time and checked against its format after; replayed at open (what it holds
 * acknowledged but not applied is applied, [recovery]) and then registered with the fabric; a background thread that
 * applies its writes into the {@link Store} ({@link #run}); the newest unapplied write of
 * a key for GET ({@link #lookup}); stop and close; and the counts STATS reports. Each log keeps its own format, its
 * replay, its lookup and its thread's loop.
 *
 * <p>The monitor of the log guards what its subclass keeps under it; {@link #stop} notifies it.
 */
abstract class AppliedLog implements AutoCloseable {
    /**
     * A log file's format: its kind, its three geometry words (named as an error names them) and its data length.
     * {@code existing} opens a file that is there (by default: of this kind only).
     */
    record Format(int kind, long[] geometry, String[] names, long dataLength, String dataLengthName,
                  BiFunction<Path, WriteLatencyModel, PmRegion> existing) {
        Format(int kind, long[] geometry, String[] names, long dataLength, String dataLengthName) {
            this(kind, geometry, names, dataLength, dataLengthName, (path, latency) -> PmRegion.open(path, kind, latency));
        }
    }

    final PmRegion file;
    final Store store;
    final StoreStats stats;
    /** Writes applied by the background thread (not by replay). */
    final LongAdder applied = new LongAdder();
    volatile boolean running = true;
    /** The log's own logger (a write that cannot be applied is logged there). */
    private final Logger log;
    private long replayed;
    private MemoryRegion registration;

    AppliedLog(PmRegion file, Store store, StoreStats stats, Logger log) {
        this.file = file;
        this.store = store;
        this.stats = stats;
        this.log = log;
    }

    /**
     * Opens {@code path} as {@code format} says, creating it if it is not there, and makes the log on it with
     * {@code make}; the file is closed if that fails (a geometry or length that differs from the format's is refused,
     * naming found and expected).
     */
    static <L extends AppliedLog> L open(Path path, Format format, WriteLatencyModel latency, Function<PmRegion, L> make) {
        PmRegion file = Files.exists(path) ? format.existing().apply(path, latency)
                : PmRegion.create(path, format.kind(), format.dataLength(), format.geometry(), latency);
        try {
            for (int slot = 0; slot < format.geometry().length; slot++) {
                file.requireGeometry(slot, format.names()[slot], format.geometry()[slot]);
            }
            PmFormatException.requireEqual(path, format.dataLengthName(), file.dataLength(), format.dataLength());
            return make.apply(file);
        } catch (RuntimeException e) {
            file.close();
            throw e;
        }
    }

    /**
     * The end of a log's construction: {@code replayed} writes were applied by its replay, and the file's data is
     * registered with the fabric as {@code registration}.
     */
    final void opened(long replayed, MemoryRegion registration) {
        this.replayed = replayed;
        this.registration = registration;
    }

    /** Options that register the file's data with {@code access}, backed by the file (for the fabric's peers). */
    final RegisterOptions registerOptions(EnumSet<Access> access) {
        return RegisterOptions.of(access).withBacking(new Backing(file.path(), file.dataFileOffset()));
    }

    final MemoryRegion registration() {
        return registration;
    }

    /**
     * Applies one acknowledged write into the store (a delete when {@code delete}); one the store cannot take (table
     * or log full) is lost from the destination: counted as an error and logged as {@code what} names it. Returns
     * whether it was applied.
     */
    final boolean apply(MemorySegment key, MemorySegment value, boolean delete, Supplier<String> what) {
        try {
            store.apply(key, value, delete);
            return true;
        } catch (RuntimeException failed) {
            stats.errors.increment();
            log.log(Level.SEVERE, what.get() + " could not be applied", failed);
            return false;
        }
    }

    /** The newest write of {@code key} not yet applied: its value, null for a delete; or {@link PendingWrite#NONE}. */
    abstract PendingWrite lookup(MemorySegment key);

    /** The background thread's body: applies writes in order until {@link #stop}. */
    abstract void run();

    /** Writes not yet applied. */
    abstract int pending();

    /** Writes replayed by the open. */
    final long replayed() {
        return replayed;
    }

    /** Writes the background thread applied. */
    final long applied() {
        return applied.sum();
    }

    /** Bytes stored into the file: the server's own, plus what clients wrote into it ({@link #remoteBytesWritten}). */
    final long bytesWritten() {
        return file.localBytesWritten() + remoteBytesWritten();
    }

    /** Bytes clients wrote into the file one-sided; none unless the log is registered for that. */
    long remoteBytesWritten() {
        return 0;
    }

    /** Asks the background thread to end (before it is interrupted and joined); what is unapplied is replayed later. */
    final synchronized void stop() {
        running = false;
        notifyAll();
    }

    @Override
    public final void close() {
        stop();
        registration.close();
        file.close();
    }
}
