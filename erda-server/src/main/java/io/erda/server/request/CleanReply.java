package io.erda.server.request;

import io.erda.cleaner.CleaningReport;
import java.time.Duration;
import java.util.Locale;

/** The body of a CLEAN reply: the report of the cleaning run as "name=value" lines, which the client parses. */
final class CleanReply {
    private CleanReply() {
    }

    static String text(CleaningReport r) {
        return "head=" + r.headId() + "\ngeneration_before=" + r.generationBefore() + "\ngeneration_after="
                + r.generationAfter() + "\noccupied_bytes_before=" + r.occupiedBefore() + "\noccupied_bytes_after="
                + r.occupiedAfter() + "\nlive_bytes_copied=" + r.liveBytesCopied() + "\nobjects_copied=" + r.objectsCopied()
                + "\nstale_skipped=" + r.staleSkipped() + "\nentries_removed=" + r.entriesRemoved() + "\nmerge_ms="
                + millis(r.merge()) + "\nreplicate_ms=" + millis(r.replicate()) + "\nswitch_ms=" + millis(r.switchOver())
                + "\nretire_ms=" + millis(r.retire()) + "\ntwo_sided_ms=" + millis(r.twoSided()) + "\ntotal_ms="
                + millis(r.total()) + "\ncopy_mb_per_s=" + String.format(Locale.ROOT, "%.1f",
                r.copyMegabytesPerSecond()) + "\n";
    }

    private static String millis(Duration d) {
        return String.format(Locale.ROOT, "%.3f", d.toNanos() / 1e6);
    }
}
