package io.erda.fabric;

import java.util.Map;

/** A transport implementation, found by {@link java.util.ServiceLoader} and chosen by URI scheme. */
public interface FabricProvider {

    /** The URI scheme this provider serves: "tcp", "shm", "verbs". */
    String scheme();

    /** Opens a fabric instance (a device context with its engine threads, if any). */
    Fabric open(Map<String, String> properties) throws FabricException;
}
