package io.erda.core.testing;

import io.erda.protocol.memory.AtomicWord;
import java.util.HashMap;
import java.util.HashSet;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentLinkedQueue;

/**
 * The changes one entry's atomic word went through, as the writers that won them report them, judged for a lost
 * update. When every writer changes the word by CAS from the word it read, the changes form one chain from the first
 * word to the entry's last, each from the word the one before left. A store over a word its writer did not read
 * shows as a fork (two changes from one word: one overwrote the other) or as a change the chain never reaches.
 *
 * <p>Words must not repeat within one history (each change names a fresh offset); a repeat makes the chain ambiguous
 * and is reported as such rather than passed.
 */
public final class WordHistory {
    /** What a removal of the entry leaves. */
    public static final long REMOVED = 0;

    private record Change(String writer, long from, long to) {
        @Override
        public String toString() {
            return writer + ": " + AtomicWord.toString(from) + " -> " + (to == REMOVED ? "removed" : AtomicWord.toString(to));
        }
    }

    private final long first;
    private final ConcurrentLinkedQueue<Change> changes = new ConcurrentLinkedQueue<>();

    public WordHistory(long first) {
        this.first = first;
    }

    /** Records a change {@code writer} won: the word was {@code from} and became {@code to} ({@link #REMOVED}). */
    public void changed(String writer, long from, long to) {
        changes.add(new Change(writer, from, to));
    }

    /** Changes recorded so far. */
    public int size() {
        return changes.size();
    }

    /** How many recorded changes {@code writer} won. */
    public long wonBy(String writer) {
        return changes.stream().filter(c -> c.writer.equals(writer)).count();
    }

    /**
     * Null if the changes form one chain from the first word that ends at {@code last} (the entry's word now, or
     * {@link #REMOVED}); else what is wrong, naming the changes involved.
     */
    public String anomaly(long last) {
        Map<Long, Change> byFrom = new HashMap<>();
        for (Change c : changes) {
            Change other = byFrom.putIfAbsent(c.from, c);
            if (other != null) {
                return "two changes won from the same word, so one overwrote the other: [" + other + "] and [" + c + "]";
            }
        }
        long word = first;
        int steps = 0;
        Set<Long> seen = new HashSet<>();
        while (word != REMOVED && byFrom.containsKey(word)) {
            if (!seen.add(word)) {
                return "word " + AtomicWord.toString(word) + " repeats: the history is ambiguous";
            }
            word = byFrom.get(word).to;
            steps++;
        }
        if (steps != changes.size()) {
            Set<Long> reached = seen;
            Change lost = changes.stream().filter(c -> !reached.contains(c.from)).findFirst().orElseThrow();
            return (changes.size() - steps) + " of " + changes.size() + " changes are not reached from the first word "
                    + AtomicWord.toString(first) + " (lost), e.g. [" + lost + "]";
        }
        if (word != last) {
            return "the changes end at " + (word == REMOVED ? "removed" : AtomicWord.toString(word)) + " but the entry holds "
                    + (last == REMOVED ? "nothing" : AtomicWord.toString(last));
        }
        return null;
    }
}
