package io.erda.fabric;

import java.util.EnumSet;
import java.util.Objects;
import java.util.Set;

/**
 * How to register a segment.
 *
 * @param access                      rights given to the local NIC and to peers
 * @param backing                     the file the segment maps, or null for anonymous memory (which the shm
 *                                    provider can then only use locally)
 * @param writeDelayNanosPerCacheLine PM write-latency model: every one-sided write or atomic into the region,
 *                                    by whichever provider executes it, spends this many extra nanoseconds per
 *                                    64-byte cache line written (the papers use 150 ns); 0 turns it off
 * @param durableMirror               where one-sided writes and atomics are also copied once durable by its
 *                                    {@link DurableMirror.Durability} (power-failure emulation), or null
 */
public record RegisterOptions(Set<Access> access, Backing backing, long writeDelayNanosPerCacheLine,
                              DurableMirror durableMirror) {

    public RegisterOptions {
        access = Set.copyOf(Objects.requireNonNull(access, "access"));
        if (writeDelayNanosPerCacheLine < 0) {
            throw new IllegalArgumentException("write delay " + writeDelayNanosPerCacheLine + " ns is negative");
        }
    }

    public static RegisterOptions of(Set<Access> access) {
        return new RegisterOptions(access, null, 0, null);
    }

    public static RegisterOptions local() {
        return of(EnumSet.of(Access.LOCAL_WRITE));
    }

    public RegisterOptions withBacking(Backing newBacking) {
        return new RegisterOptions(access, newBacking, writeDelayNanosPerCacheLine, durableMirror);
    }

    public RegisterOptions withWriteDelay(long nanosPerCacheLine) {
        return new RegisterOptions(access, backing, nanosPerCacheLine, durableMirror);
    }

    /** These options with one-sided writes also copied into {@code mirror} (null: none). */
    public RegisterOptions withDurableMirror(DurableMirror mirror) {
        return new RegisterOptions(access, backing, writeDelayNanosPerCacheLine, mirror);
    }

    public boolean allows(Access a) {
        return access.contains(a);
    }
}
