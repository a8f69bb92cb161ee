package io.erda.client;

import io.erda.protocol.memory.Key;
import java.lang.foreign.MemorySegment;

/**
 * What the baseline clients of paper §5.1 share: a GET is always two-sided (the server looks at its PM log of
 * unapplied writes first, then at the table), and both check key and value against the server's limits before
 * anything is sent ({@link #checkPairLimits}).
 */
public abstract sealed class BaselineClient extends PooledClient permits RedoLogClient, ReadAfterWriteClient {

    BaselineClient(ClientOptions options) {
        super(options);
    }

    @Override
    final MemorySegment read(ClientConnection c, Key key) {
        stats.twoSidedGets.increment();
        return c.getTwoSided(key);
    }
}
