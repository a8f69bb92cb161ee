package io.erda.cluster.client;

import java.util.logging.Level;
import java.util.logging.Logger;

/**
 * Closes a connection to a member that left the map on a thread of its own. Closing a connection to a member that
 * hangs (paused, cut off) waits out the fabric's peer timeout, seconds; on ZooKeeper's event thread that would hold up
 * every later map change, so a map change never waits on a close ([cluster]).
 */
public final class DetachedClose {
    private static final Logger LOG = Logger.getLogger(DetachedClose.class.getName());

    private DetachedClose() {
    }

    /** Starts closing {@code resource} ({@code what} names it in a failure) and returns at once. */
    public static Thread start(AutoCloseable resource, String what) {
        return Thread.ofVirtual().name("erda-close-" + what).start(() -> {
            try {
                resource.close();
            } catch (Exception e) {
                LOG.log(Level.FINE, "closing " + what + " failed", e);
            }
        });
    }
}
