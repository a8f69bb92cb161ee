package io.erda.ffm.verbs;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.SymbolLookup;

/**
 * An RDMA network inside one JVM, for tests without an RNIC: its devices answer libibverbs' and librdmacm's symbols
 * with upcall stubs, so that {@code new VerbsLibrary(device.lookup(), rdmaCoreVersion())},
 * {@code IbvContext.wrap(verbs, device.context())} and {@code new RdmaCmLibrary(device.lookup())} run the provider
 * code above them unchanged.
 *
 * <p>No production jar contains an implementation: it is the test-scope artifact {@value #ARTIFACT}, which registers
 * one in {@code META-INF/services/io.erda.ffm.verbs.SoftwareRnic} for {@link java.util.ServiceLoader}. An
 * implementation has a public no-argument constructor, and the devices of every instance of it in a JVM are on one
 * network: a queue pair or rdma_cm id on one reaches those on the others.
 */
public interface SoftwareRnic {
    /** The Maven artifact with the implementation, for errors that say it is missing from the class path. */
    String ARTIFACT = "io.erda:erda-soft-rnic";

    /** A new device (an ibv_context with its own port address) on the network. */
    Device newDevice();

    /** The rdma-core release the devices' symbols stand for (see {@link NativeCapabilities#forVersion}). */
    int rdmaCoreVersion();

    /** One device of a {@link SoftwareRnic}: a symbol lookup and the {@code struct ibv_context} it answers for. */
    interface Device extends AutoCloseable {
        /** libibverbs' and librdmacm's symbols as this device implements them; anything else is absent. */
        SymbolLookup lookup();

        /** The device's {@code struct ibv_context *}. */
        MemorySegment context();

        /** Destroys what is left on the device and frees its native memory. */
        @Override
        void close();
    }
}
