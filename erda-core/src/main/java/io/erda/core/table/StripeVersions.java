package io.erda.core.table;

import io.erda.core.pm.PmRegion;
import io.erda.protocol.memory.NeighbourhoodWindow;
import io.erda.protocol.memory.TableGeometry;
import io.erda.protocol.memory.Words;
import java.lang.invoke.VarHandle;

/**
 * Server side of the stripe seqlock that lets one-sided readers detect hopscotch moves (see
 * {@link NeighbourhoodWindow} for the reader side). A move makes the version of every stripe it
 * touches odd, moves, then makes them even again.
 *
 * <p>The words live in the table file so clients can READ them, but they are only meaningful
 * while the server runs: on open an odd word (a crash mid-move) is bumped back to even.
 */
final class StripeVersions {
    private final PmRegion region;
    private final TableGeometry geometry;

    StripeVersions(PmRegion region, TableGeometry geometry) {
        this.region = region;
        this.geometry = geometry;
    }

    /** Marks the stripes of buckets {@code a} and {@code b} as being changed (odd). */
    void begin(long a, long b) {
        bump(geometry.stripeOf(a));
        if (geometry.stripeOf(b) != geometry.stripeOf(a)) {
            bump(geometry.stripeOf(b));
        }
        // the odd versions must be visible before any entry store of the move
        VarHandle.storeStoreFence();
    }

    /** Ends a change begun by {@link #begin}: versions even again, then persisted. */
    void end(long a, long b) {
        long first = Math.min(geometry.stripeOf(a), geometry.stripeOf(b));
        long last = Math.max(geometry.stripeOf(a), geometry.stripeOf(b));
        bump(geometry.stripeOf(a));
        if (geometry.stripeOf(b) != geometry.stripeOf(a)) {
            bump(geometry.stripeOf(b));
        }
        region.persist(geometry.stripeVersionOffset(first), (last - first + 1) * Long.BYTES);
    }

    long version(long stripe) {
        return Words.getAcquire(region.data(), geometry.stripeVersionOffset(stripe));
    }

    /** Makes every odd version even (after a crash mid-move); returns how many were odd. */
    int repair() {
        int repaired = 0;
        for (long stripe = 0; stripe < geometry.stripeCount(); stripe++) {
            if ((version(stripe) & 1) != 0) {
                bump(stripe);
                region.persist(geometry.stripeVersionOffset(stripe), Long.BYTES);
                repaired++;
            }
        }
        return repaired;
    }

    private void bump(long stripe) {
        // single writer: a release store (not an atomic add) suffices; it orders earlier entry stores before it
        region.setLongRelease(geometry.stripeVersionOffset(stripe), version(stripe) + 1);
    }
}
