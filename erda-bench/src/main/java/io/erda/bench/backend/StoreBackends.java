package io.erda.bench.backend;

import java.util.ArrayList;
import java.util.List;
import java.util.ServiceLoader;
import java.util.TreeSet;

/** Finds the {@link StoreBackend} for a protocol name among those on the class path. */
public final class StoreBackends {

    private StoreBackends() {
    }

    public static StoreBackend forProtocol(String protocol) {
        List<String> known = new ArrayList<>();
        for (StoreBackend b : ServiceLoader.load(StoreBackend.class)) {
            if (b.protocols().contains(protocol)) {
                return b;
            }
            known.addAll(b.protocols());
        }
        throw new IllegalArgumentException("no store backend for protocol '" + protocol + "'; known: " + new TreeSet<>(known));
    }
}
