package io.erda.cleaner;

/** Told when a cleaning run reaches a {@link CleaningPoint}; tests throw to simulate a crash there, a server may pause. */
@FunctionalInterface
public interface CleaningHook {
    CleaningHook NONE = (headId, point) -> { };

    void reached(int headId, CleaningPoint point);
}
