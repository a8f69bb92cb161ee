package io.erda.server.store;

import io.erda.cleaner.CleaningHost;
import io.erda.core.pm.PmRegion;
import java.time.Duration;
import java.util.List;
import java.util.function.LongPredicate;
import java.util.function.Supplier;

/**
 * The server's side of cleaning over a bare store, no fabric: the cleaner's changes under the store lock, and the
 * reservations it waits for settled as the lease validator would once their leases ran out. Tests override
 * {@link #awaitSettled} to cut or widen the run there.
 */
class BareStoreCleaningHost implements CleaningHost {
    protected final Store store;

    BareStoreCleaningHost(Store store) {
        this.store = store;
    }

    @Override
    public <T> T locked(Supplier<T> action) {
        return store.locked(action);
    }

    @Override
    public void headStateChanged(int headId, boolean cleaning) {
    }

    @Override
    public void regionsAdded(int headId) {
    }

    @Override
    public void retiring(int headId, List<PmRegion> regions) {
    }

    @Override
    public void awaitSettled(int headId, long issuedBeforeNanos) throws InterruptedException {
        store.leases().settleExpired(issuedBeforeNanos + store.leaseNanos());
    }

    @Override
    public long rollbacks(int headId) {
        return store.leases().rollbacks(headId);
    }

    @Override
    public boolean rollbackMayRestore(int headId, LongPredicate word) {
        return store.leases().rollbackMayRestore(headId, word);
    }

    @Override
    public Duration maxRoundTrip() {
        return Duration.ofMillis(1);
    }
}
