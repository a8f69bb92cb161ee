package io.erda.server.offline;

import io.erda.core.PmDirectory;
import io.erda.core.log.LogHead;
import io.erda.core.log.LogScanner;
import io.erda.protocol.memory.AtomicWord;
import io.erda.protocol.memory.Key;
import io.erda.protocol.memory.LogAddress;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * The offline {@code rebuild} command (docs/ARCHITECTURE.md, [recovery]: a full rebuild from the logs exists for a
 * lost table): clears the table and inserts, for each key, its newest complete object in its head's log order as the
 * current version and the one before as the previous; a key whose newest object is a tombstone gets no entry.
 */
public final class TableRebuilder {
    /** What a rebuild did. */
    public record Summary(Path directory, long objects, long keys, long deleted) {
        @Override
        public String toString() {
            return "rebuild " + directory + ": " + keys + " keys from " + objects + " complete objects (" + deleted
                    + " deleted keys left out)";
        }
    }

    private static final class Versions {
        long newest = AtomicWord.NONE;
        long previous = AtomicWord.NONE;
        boolean tombstone;
    }

    private TableRebuilder() {
    }

    public static Summary rebuild(Path directory) {
        return rebuild(directory, null);
    }

    /** As {@link #rebuild(Path)} for a store shared with {@code group} (null: none; see erda-server {@code --group}). */
    public static Summary rebuild(Path directory, String group) {
        try (PmDirectory store = OfflineStore.open(directory, group)) {
            store.table().clearAll();
            int heads = store.heads().size();
            long objects = 0;
            long keys = 0;
            long deleted = 0;
            for (LogHead head : store.heads()) {
                Map<Key, Versions> versions = new LinkedHashMap<>();
                objects += LogScanner.scan(head, LogScanner.Mode.RESYNC, (chainOffset, object) -> {
                    Key key = Key.copyOf(object.key());
                    if (key.head(heads) != head.headId()) {
                        return; // not a version of a key of this head: stray bytes that happen to validate
                    }
                    Versions v = versions.computeIfAbsent(key, k -> new Versions());
                    v.previous = v.newest;
                    v.newest = LogAddress.unitsForBytes(chainOffset);
                    v.tombstone = object.isTombstone();
                });
                for (Map.Entry<Key, Versions> e : versions.entrySet()) {
                    Versions v = e.getValue();
                    if (v.tombstone) {
                        deleted++;
                        continue;
                    }
                    long word = v.previous == AtomicWord.NONE ? AtomicWord.initial(v.newest)
                            : AtomicWord.withNewVersion(AtomicWord.initial(v.previous), v.newest);
                    store.table().insert(e.getKey().hash(), head.headId(), word);
                    keys++;
                }
            }
            return new Summary(directory, objects, keys, deleted);
        }
    }
}
