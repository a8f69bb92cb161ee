package io.erda.fabric.tcp;

import io.erda.fabric.Fabric;
import io.erda.fabric.FabricProvider;
import java.util.Map;

/** The {@code tcp://host:port} software RNIC. */
public final class TcpFabricProvider implements FabricProvider {
    @Override
    public String scheme() {
        return "tcp";
    }

    /** Properties: {@code connectTimeoutMillis} and {@code peerTimeoutMillis}, see {@link TcpSettings}. */
    @Override
    public Fabric open(Map<String, String> properties) {
        return new TcpFabric(TcpSettings.parse(properties));
    }
}
