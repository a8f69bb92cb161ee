package io.erda.server;

import io.erda.fabric.Fabric;
import io.erda.protocol.HeadArray;
import io.erda.server.store.RegionRegistry;

/**
 * What tests of the server's other packages reach inside a running {@link RequestServer}: its accessors for tests are
 * package-private, and this class, in that package, passes them on.
 */
public final class ServerInternals {
    private ServerInternals() {
    }

    public static RegionRegistry registry(RequestServer server) {
        return server.registry();
    }

    public static Fabric fabric(RequestServer server) {
        return server.fabric();
    }

    public static HeadArray headArray(RequestServer server) {
        return server.headArray();
    }
}
