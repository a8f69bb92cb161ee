package io.erda.cleaner;

/**
 * Points of a cleaning run a {@link CleaningHook} is told about: every phase boundary (after the
 * durable record changed) and the middle of each phase. Crash tests stop the run at each one.
 */
public enum CleaningPoint {
    /** New chain created, record MERGE; clients not told yet. */
    BEGUN,
    MERGE_MIDWAY,
    /** Merge scan done; record still MERGE. */
    MERGED,
    /** Writes now go to the new chain; record REPLICATE. */
    REPLICATE_STARTED,
    REPLICATE_MIDWAY,
    /** Everything written to the old chain copied and settled; record still REPLICATE. */
    REPLICATED,
    /** Record SWITCH: tag flips begin. */
    SWITCH_STARTED,
    SWITCH_MIDWAY,
    /** Record RETIRE: the head serves the new chain; the old one is still on disk. */
    SWITCHED,
    /** Old chain zeroed and deleted, record IDLE. */
    DONE
}
