package io.erda.history;

/**
 * A named way in which one key's history is not linearizable, with the operations that show it.
 *
 * @param read  the read that returned what it should not have
 * @param write for {@link Type#STALE} and {@link Type#LOST} the acknowledged write the read should have seen (or a
 *              later one); null for {@link Type#UNWRITTEN}
 */
public record Anomaly(Type type, Operation read, Operation write) {

    public enum Type {
        /**
         * A read returned a value overwritten by a write acknowledged before the read began (every write of the value
         * read had completed before that write was invoked), and a later read saw the overwriting value again: the
         * store still had it.
         */
        STALE,
        /**
         * An acknowledged write that reads stop reflecting for good: a read invoked after its acknowledgement returned
         * an older value (or absent), and no read invoked after that one returned its value.
         */
        LOST,
        /** A read returned a value that no write had written by the time the read completed (torn, foreign, future). */
        UNWRITTEN
    }

    public String describe() {
        return switch (type) {
            case STALE -> "stale: " + read + " returned an older value than " + write + ", acknowledged before it began";
            case LOST -> "lost: " + write + " was acknowledged, but " + read + " and every read after it missed it";
            case UNWRITTEN -> "unwritten: " + read + " returned a value no write had written by then";
        };
    }
}
