package io.erda.fabric;

import java.net.URI;
import java.util.concurrent.TimeUnit;

/** Accepts connection requests on a URI ({@code rdma_listen}). */
public interface Listener extends AutoCloseable {

    /** The URI peers connect to (a port of 0 in the listen URI is resolved here). */
    URI uri();

    /** Waits for the next connection request; null on timeout. */
    ConnectionRequest accept(long timeout, TimeUnit unit) throws InterruptedException;

    @Override
    void close();
}
