package io.erda.core.log;

import io.erda.core.pm.PmFileHeader;
import io.erda.core.pm.PmRegion;
import io.erda.core.pm.WriteLatencyModel;
import java.nio.file.Path;

/**
 * The PM file {@code heads.pm}: one {@link HeadRecord} word per head (geometry slot 0: head count).
 * Each change is one release store, persisted before returning, so a crash leaves either the old or
 * the new record of a head, never a mix.
 */
public final class HeadRecords implements AutoCloseable {
    public static final String FILE = "heads.pm";

    private final PmRegion region;
    private final int heads;

    private HeadRecords(PmRegion region, int heads) {
        this.region = region;
        this.heads = heads;
    }

    public static HeadRecords create(Path file, int heads, WriteLatencyModel latency) {
        long length = (long) heads * HeadRecord.LENGTH;
        return new HeadRecords(PmRegion.create(file, PmFileHeader.KIND_HEAD_RECORDS, length, new long[] {heads}, latency), heads);
    }

    public static HeadRecords open(Path file, int heads, WriteLatencyModel latency) {
        PmRegion region = PmRegion.open(file, PmFileHeader.KIND_HEAD_RECORDS, latency);
        try {
            region.requireGeometry(0, "head count", heads);
            return new HeadRecords(region, heads);
        } catch (RuntimeException e) {
            region.close();
            throw e;
        }
    }

    public long record(int head) {
        return io.erda.protocol.memory.Words.getAcquire(region.data(), offset(head));
    }

    public CleaningPhase phase(int head) {
        return HeadRecord.phase(record(head));
    }

    public int generation(int head) {
        return HeadRecord.generation(record(head));
    }

    /** One persisted 8-byte store. */
    public void set(int head, CleaningPhase phase, int generation) {
        long offset = offset(head);
        region.setLongRelease(offset, HeadRecord.of(phase, generation));
        region.persist(offset, HeadRecord.LENGTH);
    }

    private long offset(int head) {
        if (head < 0 || head >= heads) {
            throw new IllegalArgumentException("head " + head + " outside [0, " + heads + ")");
        }
        return (long) head * HeadRecord.LENGTH;
    }

    public PmRegion region() {
        return region;
    }

    @Override
    public void close() {
        region.close();
    }
}
