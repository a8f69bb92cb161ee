package io.erda.core.log;

/**
 * Where a head stands in log cleaning (paper §4.4), as its durable {@link HeadRecords} record says.
 * Core opens a head's chains from it; the cleaner moves it forward. Codes are stored in PM.
 *
 * <pre>
 *  IDLE(g) --begin--> MERGE(g) --> REPLICATE(g) --> SWITCH(g) --commit--> RETIRE(g+1) --> IDLE(g+1)
 * </pre>
 *
 * <p>{@code g} is the generation of the chain the head serves. From MERGE to SWITCH a second chain of
 * generation {@code g+1} exists and entries may point into either; RETIRE means the head serves
 * {@code g+1} and the old chain, referenced by no entry, is being zeroed and deleted.
 */
public enum CleaningPhase {
    IDLE(0),
    /** Live objects of the old chain up to the tail at the start are being copied to the new chain. */
    MERGE(1),
    /** Writes go to the new chain; what was written to the old chain during the merge is being copied. */
    REPLICATE(2),
    /** Tags are being flipped so that every entry points into the new chain. */
    SWITCH(3),
    /**
     * The head serves the new chain; the old one is being zeroed and deleted (docs/ARCHITECTURE.md,
     * [recycled-memory]).
     */
    RETIRE(4);

    private final int code;

    CleaningPhase(int code) {
        this.code = code;
    }

    public int code() {
        return code;
    }

    /** Whether a second (new) chain exists besides the serving one. */
    public boolean hasNewChain() {
        return this == MERGE || this == REPLICATE || this == SWITCH;
    }

    public static CleaningPhase of(int code) {
        for (CleaningPhase phase : values()) {
            if (phase.code == code) {
                return phase;
            }
        }
        throw new IllegalArgumentException("cleaning phase code " + code + " is none of " + java.util.Arrays.toString(values()));
    }
}
