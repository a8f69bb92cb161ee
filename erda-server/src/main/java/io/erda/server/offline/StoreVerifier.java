package io.erda.server.offline;

import io.erda.core.LogObjects;
import io.erda.core.PmDirectory;
import io.erda.core.log.LogHead;
import io.erda.core.log.LogScanner;
import io.erda.protocol.memory.AtomicWord;
import io.erda.protocol.memory.KeyHash;
import io.erda.protocol.memory.LogAddress;
import io.erda.protocol.memory.LogGeometry;
import io.erda.protocol.memory.ObjectCheck;
import io.erda.protocol.memory.ObjectFlyweight;
import java.lang.foreign.ValueLayout;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/**
 * The offline {@code verify} command: every entry's current object must be complete with a key of the entry's
 * fingerprint and head, and its previous offset inside the head's log; every head's log is scanned, and areas that
 * hold no complete object between complete ones (torn or never-written reservations) are counted: they are not
 * failures unless an entry's current names them.
 */
public final class StoreVerifier {
    private static final int MAX_LISTED = 20;

    /** What verify found; clean iff no problem. */
    public record Report(Path directory, long entries, long tombstones, long objects, long tornAreas, long tornBytes,
                         List<String> problems) {
        public boolean clean() {
            return problems.isEmpty();
        }

        @Override
        public String toString() {
            StringBuilder b = new StringBuilder();
            b.append("verify ").append(directory).append(": ").append(entries).append(" entries (").append(tombstones)
                    .append(" deleted), ").append(objects).append(" complete objects in the logs, ").append(tornAreas)
                    .append(" unreferenced torn areas (").append(tornBytes).append(" bytes): ")
                    .append(clean() ? "clean" : problems.size() + " problems");
            problems.stream().limit(MAX_LISTED).forEach(p -> b.append("\n  ").append(p));
            if (problems.size() > MAX_LISTED) {
                b.append("\n  ... and ").append(problems.size() - MAX_LISTED).append(" more");
            }
            return b.toString();
        }
    }

    private StoreVerifier() {
    }

    public static Report verify(Path directory) {
        return verify(directory, null);
    }

    /** As {@link #verify(Path)} for a store shared with {@code group} (null: none; see erda-server {@code --group}). */
    public static Report verify(Path directory, String group) {
        try (PmDirectory store = OfflineStore.open(directory, group)) {
            List<String> problems = new ArrayList<>();
            long[] entries = {0, 0};
            LogObjects objects = new LogObjects(store);
            int heads = store.heads().size();
            store.table().forEach((position, word, fingerprint, head) -> {
                entries[0]++;
                if (head >= heads) {
                    problems.add("entry at bucket " + position + ": head " + head + " outside [0, " + heads + ")");
                    return;
                }
                ObjectFlyweight object = new ObjectFlyweight();
                long current = AtomicWord.current(word);
                ObjectCheck check = objects.wrap(head, current, object, null);
                if (!check.isValid()) {
                    problems.add("entry at bucket " + position + ": current object at head " + head + " chain offset "
                            + LogAddress.bytesForUnits(current) + " is " + check);
                } else {
                    long hash = KeyHash.hash(object.key().toArray(ValueLayout.JAVA_BYTE));
                    if (KeyHash.fingerprint(hash) != fingerprint || KeyHash.headId(hash, heads) != head) {
                        problems.add("entry at bucket " + position + ": current object at head " + head
                                + " chain offset " + LogAddress.bytesForUnits(current) + " holds a key of another entry");
                    } else if (object.isTombstone()) {
                        entries[1]++;
                    }
                }
                long previous = AtomicWord.previous(word);
                long tail = store.head(head).tail();
                if (previous != AtomicWord.NONE && !store.head(head).isReserved(LogAddress.bytesForUnits(previous), 0)) {
                    problems.add("entry at bucket " + position + ": previous chain offset "
                            + LogAddress.bytesForUnits(previous) + " is past the tail " + tail + " of head " + head
                            + " (or in no chain of it)");
                }
            });
            long[] log = {0, 0, 0};
            for (LogHead head : store.heads()) {
                scanGaps(head, log);
            }
            return new Report(directory, entries[0], entries[1], log[0], log[1], log[2], problems);
        }
    }

    /** Counts complete objects and the gaps between them inside each segment: {objects, gaps, gap bytes}. */
    private static void scanGaps(LogHead head, long[] counts) {
        LogGeometry geometry = head.geometry();
        long[] expected = {-1};
        counts[0] += LogScanner.scan(head, LogScanner.Mode.RESYNC, (chainOffset, object) -> {
            long segmentStart = geometry.segmentStart(chainOffset);
            long from = expected[0] >= 0 && geometry.segmentStart(expected[0]) == segmentStart
                    ? expected[0] : segmentStart + LogGeometry.SEGMENT_HEADER_LENGTH;
            if (chainOffset > from) {
                counts[1]++;
                counts[2] += chainOffset - from;
            }
            expected[0] = chainOffset + object.totalLength();
        });
    }
}
