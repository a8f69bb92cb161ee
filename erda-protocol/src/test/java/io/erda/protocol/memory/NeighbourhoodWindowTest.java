package io.erda.protocol.memory;

import static org.assertj.core.api.Assertions.assertThat;

import java.lang.foreign.MemorySegment;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;

/** {@link NeighbourhoodWindow#candidates}: which entries of a window a GET reads the object of. */
class NeighbourhoodWindowTest {
    private static final int H = 32;

    @Test
    void onlyValidEntriesWithTheKeysFingerprintAtTheirOwnHopDistanceAreCandidates() {
        long hash = 0x1234_5678_9ABC_DEF0L;
        int fingerprint = KeyHash.fingerprint(hash);
        MemorySegment window = MemorySegment.ofArray(new byte[H * HashEntryLayout.LENGTH]);
        meta(window, 0, HashEntryLayout.meta(fingerprint, 3, 0)); // a candidate, in head 3
        meta(window, 1, HashEntryLayout.meta(fingerprint, 0, 1) | 0x80); // a candidate with another flag bit set
        meta(window, 2, HashEntryLayout.meta(fingerprint, 0, 2) & ~HashEntryLayout.FLAG_VALID); // not valid
        meta(window, 3, HashEntryLayout.meta(fingerprint ^ 1, 0, 3)); // another fingerprint
        meta(window, 4, HashEntryLayout.meta(fingerprint, 0, 5)); // an entry of another home bucket
        meta(window, 31, HashEntryLayout.meta(fingerprint, 0xFFFF, 31)); // the last entry, the highest head id
        assertThat(NeighbourhoodWindow.candidates(window, H, hash)).isEqualTo(0b11L | 1L << 31);
    }

    @Test
    void aWindowShorterThanTheNeighbourhoodIsReadOnlyAsFarAsItGoes() {
        long hash = 77;
        MemorySegment window = MemorySegment.ofArray(new byte[4 * HashEntryLayout.LENGTH]);
        for (int i = 0; i < 4; i++) {
            meta(window, i, HashEntryLayout.meta(KeyHash.fingerprint(hash), 0, i));
        }
        assertThat(NeighbourhoodWindow.candidates(window, H, hash)).isEqualTo(0b1111L);
    }

    /** Random windows, most entries near a match, against the three tests one entry at a time. */
    @Test
    void agreesWithTestingValidityFingerprintAndHopDistanceOneByOne() {
        SplittableRandom random = new SplittableRandom(11);
        MemorySegment window = MemorySegment.ofArray(new byte[H * HashEntryLayout.LENGTH]);
        int candidates = 0;
        for (int round = 0; round < 20_000; round++) {
            long hash = random.nextLong();
            int fingerprint = KeyHash.fingerprint(hash);
            for (int i = 0; i < H; i++) {
                int f = random.nextInt(4) == 0 ? random.nextInt() : fingerprint;
                int hop = random.nextInt(3) == 0 ? random.nextInt(HashEntryLayout.MAX_HOP_DISTANCE + 1) : i;
                long meta = HashEntryLayout.meta(f, random.nextInt(1 << 16), hop) | random.nextInt(1 << 8);
                meta(window, i, random.nextInt(5) == 0 ? meta & ~HashEntryLayout.FLAG_VALID : meta);
            }
            long mask = NeighbourhoodWindow.candidates(window, H, hash);
            assertThat(mask).isEqualTo(oneByOne(window, hash));
            candidates += Long.bitCount(mask);
        }
        assertThat(candidates).as("the windows had candidates to find").isGreaterThan(100_000);
    }

    private static long oneByOne(MemorySegment window, long hash) {
        long mask = 0;
        for (int i = 0; i < H; i++) {
            long meta = Words.get(window, (long) i * HashEntryLayout.LENGTH + HashEntryLayout.META_OFFSET);
            if (HashEntryLayout.isValid(meta) && HashEntryLayout.fingerprint(meta) == KeyHash.fingerprint(hash)
                    && HashEntryLayout.hopDistance(meta) == i) {
                mask |= 1L << i;
            }
        }
        return mask;
    }

    private static void meta(MemorySegment window, int index, long meta) {
        window.set(Words.LONG_U, (long) index * HashEntryLayout.LENGTH + HashEntryLayout.META_OFFSET, meta);
    }
}
