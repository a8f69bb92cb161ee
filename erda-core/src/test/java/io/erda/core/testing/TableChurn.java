package io.erda.core.testing;

import io.erda.core.table.HopscotchTable;
import io.erda.core.table.TableFullException;
import io.erda.protocol.memory.AtomicWord;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;

/**
 * The server's side of a race on the table: a thread of its own inserts keys of its own (inserts that displace other
 * entries, so they move) and removes them again, keeping between {@code low} and {@code high} of them, until stopped.
 * Its words name offsets from {@code firstOffset} up, so they never repeat a client's.
 */
public final class TableChurn {
    private final AtomicBoolean stopping = new AtomicBoolean();
    private final AtomicReference<Throwable> failure = new AtomicReference<>();
    private final Thread thread;
    private long changes;

    public TableChurn(HopscotchTable table, long seed, int low, int high, long firstOffset) {
        Random random = new Random(seed);
        thread = Thread.ofPlatform().name("table-churn").start(() -> {
            try {
                List<long[]> own = new ArrayList<>();
                long offset = firstOffset;
                while (!stopping.get()) {
                    if (own.size() < high && (own.size() < low || random.nextBoolean())) {
                        long hash = random.nextLong();
                        long word = AtomicWord.initial(offset++);
                        try {
                            table.insert(hash, 1, word);
                            own.add(new long[] {hash, word});
                        } catch (TableFullException full) {
                            // at this load now and then; nothing changed
                        }
                    } else {
                        long[] victim = own.remove(random.nextInt(own.size()));
                        if (!table.remove(table.lookup(victim[0], (p, w, h) -> w == victim[1]), victim[1])) {
                            throw new AssertionError("removal of a key only the churn writes lost its CAS");
                        }
                    }
                    changes++;
                }
            } catch (Throwable t) {
                failure.set(t);
            }
        });
    }

    /** Stops the churn and returns how many inserts and removals it made; fails with what failed its thread. */
    public long stop() throws InterruptedException {
        stopping.set(true);
        thread.join();
        if (failure.get() != null) {
            throw new AssertionError("the table churn failed", failure.get());
        }
        return changes;
    }
}
