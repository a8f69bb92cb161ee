package io.erda.client;

import java.net.URI;
import java.nio.file.Path;

/** The providers the end-to-end tests run over. */
enum TestFabric {
    TCP, SHM;

    /** Where a server for a store in {@code storeDir} listens (tcp: any free port; shm: a directory beside the store). */
    URI listenUri(Path storeDir) {
        return switch (this) {
            case TCP -> URI.create("tcp://127.0.0.1:0");
            case SHM -> URI.create("shm://" + storeDir.resolveSibling(storeDir.getFileName() + "-fabric").toAbsolutePath());
        };
    }
}
