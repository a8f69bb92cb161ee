package io.erda.client;

import io.erda.fabric.FabricException;

/**
 * A PUT or DELETE that failed after its first WRITE: its object may be on the server (and, replicated, on the backup)
 * and visible to GETs, or not. Trying it again would be a second write of the same value, which may land after
 * another client's write of the key and so take effect twice (a register holding v, then w, then v again from one
 * operation): the clients do not try it again themselves ({@link PooledClient}, and the {@code zk://} client), and
 * the caller learns the operation's outcome is unknown. A fabric failure still, for code that handles those alike.
 */
public final class WriteOutcomeUnknownException extends FabricException {
    public WriteOutcomeUnknownException(String message, Throwable cause) {
        super(message, cause);
    }
}
