package io.erda.server.store;

import io.erda.core.pm.PmRegion;
import io.erda.core.table.WordCas;
import io.erda.fabric.Access;
import io.erda.fabric.Backing;
import io.erda.fabric.ConnectionRequest;
import io.erda.fabric.Endpoint;
import io.erda.fabric.EndpointOptions;
import io.erda.fabric.Fabric;
import io.erda.fabric.FabricException;
import io.erda.fabric.Listener;
import io.erda.fabric.MemoryRegion;
import io.erda.fabric.RegisterOptions;
import io.erda.fabric.SyncEndpoint;
import java.net.URI;
import java.util.EnumSet;
import java.util.concurrent.TimeUnit;

/**
 * The table's word CAS through the server's own device: a loopback connection of the server's fabric to itself and a
 * registration of the table file kept to the server (remote atomics, its rkey never handed out). Where the device's
 * atomics are atomic only among its own ({@code FabricCapabilities.Atomicity.DEVICE}: IBV_ATOMIC_HCA, as rxe reports),
 * a CPU CAS by the server could be lost against a client's remote CAS on the same word (docs/one-sided-put.md,
 * [word-cas]); through the device, the server's CAS is one more remote atomic. Calls are serialized (one queue pair;
 * the table's writers are serialized anyway).
 */
public final class LoopbackWordCas implements WordCas, AutoCloseable {
    private static final long CONNECT_SECONDS = 10;

    private final MemoryRegion table;
    private final Listener listener;
    private final Endpoint self;
    private final Endpoint peer;
    private final SyncEndpoint sync;

    private LoopbackWordCas(MemoryRegion table, Listener listener, Endpoint self, Endpoint peer) {
        this.table = table;
        this.listener = listener;
        this.self = self;
        this.peer = peer;
        this.sync = new SyncEndpoint(self);
    }

    /**
     * Registers {@code tableFile}'s data area, listens on {@code loopbackListen} (an address of the same fabric, e.g.
     * port 0 of the server's host) and connects to it. Fails with a FabricException naming the address if the
     * connection is not up within {@value #CONNECT_SECONDS} s.
     */
    public static LoopbackWordCas open(Fabric fabric, PmRegion tableFile, URI loopbackListen) throws InterruptedException {
        MemoryRegion table = fabric.register(tableFile.data(), RegisterOptions.of(EnumSet.of(Access.REMOTE_READ,
                Access.REMOTE_ATOMIC)).withBacking(new Backing(tableFile.path(), tableFile.dataFileOffset())));
        Listener listener = null;
        Endpoint self = null;
        Endpoint peer = null;
        try {
            listener = fabric.listen(loopbackListen);
            self = fabric.createEndpoint(EndpointOptions.defaults());
            Endpoint connecting = self;
            URI uri = listener.uri();
            Thread connector = Thread.ofPlatform().name("erda-loopback-connect").start(() -> connecting.connect(uri, new byte[0]));
            ConnectionRequest request = listener.accept(CONNECT_SECONDS, TimeUnit.SECONDS);
            if (request == null) {
                throw new FabricException("loopback connection to " + uri + " not requested within " + CONNECT_SECONDS + " s");
            }
            peer = fabric.createEndpoint(EndpointOptions.defaults());
            request.accept(peer, new byte[0]);
            connector.join(TimeUnit.SECONDS.toMillis(CONNECT_SECONDS));
            if (self.state() != Endpoint.State.CONNECTED) {
                throw new FabricException("loopback connection to " + uri + " is " + self.state() + ", not CONNECTED, after "
                        + CONNECT_SECONDS + " s");
            }
            return new LoopbackWordCas(table, listener, self, peer);
        } catch (RuntimeException | InterruptedException e) {
            closeQuietly(peer, self, listener, table);
            throw e;
        }
    }

    @Override
    public boolean compareAndSet(long dataOffset, long expected, long replacement) {
        return sync.compareAndSwap(table.address() + dataOffset, table.rkey(), expected, replacement) == expected;
    }

    @Override
    public void close() {
        sync.close();
        closeQuietly(peer, self, listener, table);
    }

    private static void closeQuietly(AutoCloseable... closeables) {
        for (AutoCloseable c : closeables) {
            if (c == null) {
                continue;
            }
            try {
                c.close();
            } catch (Exception e) {
                // closing what failed to open, or at shutdown: nothing left to do with it
            }
        }
    }
}
