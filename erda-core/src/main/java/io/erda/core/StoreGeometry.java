package io.erda.core;

import io.erda.protocol.memory.LogAddress;
import io.erda.protocol.memory.LogGeometry;
import io.erda.protocol.memory.TableGeometry;

/** Everything fixed when a store directory is created; checked again on every open. */
public record StoreGeometry(int heads, TableGeometry table, LogGeometry log) {
    public StoreGeometry {
        if (heads < 1 || heads > LogAddress.MAX_HEADS) {
            throw new IllegalArgumentException("head count " + heads + " outside [1, " + LogAddress.MAX_HEADS + "]");
        }
    }
}
