package io.erda.fabric.verbs;

import io.erda.fabric.Fabric;
import io.erda.fabric.FabricException;
import io.erda.fabric.FabricProvider;
import java.util.Map;

/** {@code verbs://host:port}: RC queue pairs on an RNIC through libibverbs. Properties: see {@link VerbsProperties}. */
public final class VerbsFabricProvider implements FabricProvider {
    @Override
    public String scheme() {
        return "verbs";
    }

    @Override
    public Fabric open(Map<String, String> properties) throws FabricException {
        return VerbsFabric.open(VerbsProperties.parseWithSystemDefaults(properties));
    }
}
