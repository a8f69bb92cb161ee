package io.erda.cleaner;

import java.time.Duration;

/**
 * What one cleaning run of a head did (issue: measure and report).
 *
 * @param occupiedBefore  bytes the old chain occupied when cleaning began (logical tail, slack included)
 * @param occupiedAfter   bytes the new chain occupied at the switch (copies plus writes during replication)
 * @param liveBytesCopied bytes of objects the cleaner copied into the new chain
 * @param objectsCopied   objects copied
 * @param staleSkipped    versions the relocation found superseded by a PUT between finding and copying or recording
 *                        them (dropped); the stale versions of the old chain are never visited, the entries naming
 *                        the current ones
 * @param entriesRemoved  entries whose current version was a tombstone (the key's space is freed)
 * @param twoSided        from telling clients the head is being cleaned to telling them it is done
 */
public record CleaningReport(int headId, int generationBefore, int generationAfter, long occupiedBefore,
                             long occupiedAfter, long liveBytesCopied, long objectsCopied, long staleSkipped,
                             long entriesRemoved, Duration merge, Duration replicate, Duration switchOver,
                             Duration retire, Duration twoSided, Duration total) {

    /** Live data copied per second of merge + replicate + switch. */
    public double copyMegabytesPerSecond() {
        double seconds = (merge.toNanos() + replicate.toNanos() + switchOver.toNanos()) / 1e9;
        return seconds == 0 ? 0 : liveBytesCopied / 1e6 / seconds;
    }
}
