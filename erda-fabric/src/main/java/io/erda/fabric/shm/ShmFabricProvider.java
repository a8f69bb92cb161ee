package io.erda.fabric.shm;

import io.erda.fabric.Fabric;
import io.erda.fabric.FabricProvider;
import java.util.Map;

/** The {@code shm:///dir} provider: same-host fabric over shared file mappings. */
public final class ShmFabricProvider implements FabricProvider {

    @Override
    public String scheme() {
        return "shm";
    }

    /**
     * Properties: {@code home} = directory for this instance's exports (default: under the first listen or connect
     * directory); {@code group} = a group whose members may use this instance's files (default: its user only);
     * {@code ringCapacity}, {@code pollerSleepMillis} (see {@link ShmFabric}).
     */
    @Override
    public Fabric open(Map<String, String> properties) {
        return new ShmFabric(properties);
    }
}
